//! [`ClApp`] and its builder: the device chosen, its context and one in-order queue, the program cache's slots,
//! transfers and their counters, device memory and its counters.

use super::device::{DeviceFilter, DeviceInfo, DeviceKind, choose, discover};
use super::ffi;
use super::program_cache::ProgramCache;
use crate::element::Element;
use crate::error::{ClContext, Error, Result};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::event::Event;
use opencl3::memory::Buffer;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The environment variable that overrides [`ClApp::new`]'s choice: `gpu`, `cpu`, `accelerator`, a `P:D`
/// index pair (platform, device) as `cliper devices` prints it, or a case-insensitive substring of the
/// device, vendor or platform name.
///
/// ```
/// // CLIPER_DEVICE=cpu cargo run …   or   CLIPER_DEVICE=1:0   or   CLIPER_DEVICE=h100
/// assert_eq!(cliper::DEVICE_ENV, "CLIPER_DEVICE");
/// ```
pub const DEVICE_ENV: &str = "CLIPER_DEVICE";

/// The environment variable whose contents every program build gets after its own options (read once per
/// process): driver options for experiments and tuning, such as NVIDIA's `-cl-nv-verbose` (register and spill
/// counts in [`crate::Program::build_log`]) or `-cl-nv-maxrregcount=128`.
///
/// ```
/// assert_eq!(cliper::BUILD_OPTIONS_ENV, "CLIPER_BUILD_OPTIONS");
/// ```
pub const BUILD_OPTIONS_ENV: &str = "CLIPER_BUILD_OPTIONS";

/// The environment variable that, set to anything but empty or `0` (read once per process), has every program
/// the process builds print one line to stderr: its name, whether it was compiled from source or loaded from the
/// disk cache, the milliseconds it took and its options — where a first run's time goes.
///
/// ```
/// // CLIPER_LOG_BUILDS=1 CLIPER_CACHE=off cliper gaussian-filter …   →   cliper: built conv.cl from source in …
/// assert_eq!(cliper::LOG_BUILDS_ENV, "CLIPER_LOG_BUILDS");
/// ```
pub const LOG_BUILDS_ENV: &str = "CLIPER_LOG_BUILDS";

/// The environment variable that lowers the device memory a [`ClApp`] may hold (bytes, or with a `K`, `M`, `G`
/// or `T` suffix, powers of 1024): allocations past it fail with [`Error::OutOfMemory`] naming the limit, and
/// chains larger than it run in tiles (`cliper::chain`, docs/tiling.md). [`ClAppBuilder::memory_limit`] overrides it.
///
/// ```
/// // CLIPER_MEMORY_LIMIT=512M cliper run big.toml
/// assert_eq!(cliper::MEMORY_LIMIT_ENV, "CLIPER_MEMORY_LIMIT");
/// assert_eq!(cliper::parse_bytes("16M")?, 16 << 20);
/// # Ok::<(), cliper::Error>(())
/// ```
pub const MEMORY_LIMIT_ENV: &str = "CLIPER_MEMORY_LIMIT";

/// A byte count as people write it: `1048576`, `512K`, `16M`, `1.5G`, `2GiB`, `1T` (powers of 1024).
///
/// ```
/// assert_eq!(cliper::parse_bytes("1.5G")?, 3 << 29);
/// assert_eq!(cliper::parse_bytes("2GiB")?, 2 << 30);
/// assert!(cliper::parse_bytes("lots").unwrap_err().to_string().contains("lots"));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn parse_bytes(text: &str) -> Result<u64> {
    let t = text.trim();
    let bad =
        || Error::invalid("memory size", format!("`{text}` is not a size: give bytes, or a number with K, M, G or T"));
    let upper = t.to_ascii_uppercase();
    let digits = upper.trim_end_matches("IB").trim_end_matches('B');
    let (number, scale) = match digits.chars().last() {
        Some('K') => (&digits[..digits.len() - 1], 1u64 << 10),
        Some('M') => (&digits[..digits.len() - 1], 1 << 20),
        Some('G') => (&digits[..digits.len() - 1], 1 << 30),
        Some('T') => (&digits[..digits.len() - 1], 1 << 40),
        _ => (digits, 1),
    };
    let value: f64 = number.trim().parse().map_err(|_| bad())?;
    if !value.is_finite() || value < 0.0 {
        return Err(bad());
    }
    Ok((value * scale as f64).round() as u64)
}

/// The device manager: a cheap-to-clone handle (an `Arc` inside) to one OpenCL device, its context, one
/// in-order command queue and a cache of built programs. Every array and process belongs to one `ClApp`.
///
/// ```
/// use cliper::ClApp;
/// let app = ClApp::new()?; // the best device, or the one CLIPER_DEVICE names
/// println!("running on {} ({})", app.device().name, app.device().kind);
/// let cpu = ClApp::builder().device_type(cliper::DeviceKind::Cpu).profiling(true).build();
/// # drop(cpu);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone)]
pub struct ClApp {
    inner: Arc<Inner>,
}

// Fields drop in declaration order: the queue and programs go before the context that owns them.
struct Inner {
    /// In order; its lock keeps host commands' mapped buffers to themselves (`ffi::Queue`).
    queue: ffi::Queue,
    programs: Mutex<HashMap<(String, String), ProgramSlot>>,
    /// The programs compiled by earlier processes (docs/architecture.md, "Programs").
    disk: Option<ProgramCache>,
    context: Context,
    device: Device,
    info: DeviceInfo,
    profiling: bool,
    transfers: TransferCounters,
    memory: Arc<MemoryCounters>,
    /// The most bytes the arrays may hold at once: the global memory, or less ([`ClAppBuilder::memory_limit`]).
    memory_limit: u64,
}

impl Drop for Inner {
    /// Waits for the queue before anything is released. Without this a program that ends with work still queued
    /// (a last `apply` never read back) exits while PoCL's driver threads are compiling or running it, and LLVM's
    /// static destructors pull the code generator from under them: the README example segfaulted in 3 of 6 runs
    /// on a cold PoCL cache (gdb: main thread in `~PassRegistry`, a driver thread in `addPassesToEmitFile`).
    fn drop(&mut self) {
        // Nothing to report to at this point; a failed finish leaves the same state as not waiting.
        let _ = self.queue.finish();
    }
}

/// A cache entry: locked while its program builds, so one build serves every thread that asks at once.
pub(crate) type ProgramSlot = Arc<Mutex<Option<Arc<opencl3::program::Program>>>>;

#[derive(Default)]
struct TransferCounters {
    h2d_calls: AtomicU64,
    h2d_bytes: AtomicU64,
    d2h_calls: AtomicU64,
    d2h_bytes: AtomicU64,
}

/// How many host↔device copies a [`ClApp`] has made, and how many bytes they moved.
///
/// Subtract two snapshots to see what a piece of work transferred:
/// ```
/// # let app = cliper::ClApp::new()?;
/// let before = app.transfer_stats();
/// let x = cliper::XData::from_slice(&app, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
/// let _ = x.to_vec()?;
/// let moved = app.transfer_stats() - before;
/// assert_eq!((moved.host_to_device_calls, moved.device_to_host_calls), (1, 1));
/// assert_eq!(moved.device_to_host_bytes, 16);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Number of host→device copies.
    pub host_to_device_calls: u64,
    /// Bytes copied host→device.
    pub host_to_device_bytes: u64,
    /// Number of device→host copies.
    pub device_to_host_calls: u64,
    /// Bytes copied device→host.
    pub device_to_host_bytes: u64,
}

impl TransferStats {
    /// Copies in both directions.
    pub fn total_calls(&self) -> u64 {
        self.host_to_device_calls + self.device_to_host_calls
    }
}

impl std::ops::Sub for TransferStats {
    type Output = TransferStats;
    fn sub(self, before: TransferStats) -> TransferStats {
        TransferStats {
            host_to_device_calls: self.host_to_device_calls - before.host_to_device_calls,
            host_to_device_bytes: self.host_to_device_bytes - before.host_to_device_bytes,
            device_to_host_calls: self.device_to_host_calls - before.device_to_host_calls,
            device_to_host_bytes: self.device_to_host_bytes - before.device_to_host_bytes,
        }
    }
}

/// Device buffers alive now and since the start, kept by every [`ClApp`]: each array (and each process's
/// scratch) holds one buffer, released when its last view drops.
#[derive(Default)]
pub(crate) struct MemoryCounters {
    live_buffers: AtomicU64,
    live_bytes: AtomicU64,
    peak_bytes: AtomicU64,
    allocations: AtomicU64,
}

/// What device memory a [`ClApp`]'s arrays hold: a snapshot from [`ClApp::memory_stats`].
///
/// ```
/// # let app = cliper::ClApp::new()?;
/// let before = app.memory_stats();
/// let x = cliper::XData::<f32>::zeros(&app, &[256, 256])?;
/// let view = x.t(); // views share the buffer
/// assert_eq!(app.memory_stats().live_bytes - before.live_bytes, 256 * 256 * 4);
/// drop((x, view));
/// assert_eq!(app.memory_stats().live_buffers, before.live_buffers);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Device buffers alive now.
    pub live_buffers: u64,
    /// Bytes they hold (as requested).
    pub live_bytes: u64,
    /// The most bytes alive at once so far.
    pub peak_bytes: u64,
    /// Buffers allocated so far.
    pub allocations: u64,
}

/// Bytes counted in a [`ClApp`]'s [`MemoryStats`] until dropped.
struct Reservation {
    bytes: usize,
    counters: Arc<MemoryCounters>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.counters.live_buffers.fetch_sub(1, Ordering::Relaxed);
        self.counters.live_bytes.fetch_sub(self.bytes as u64, Ordering::Relaxed);
    }
}

/// A device buffer counted in its [`ClApp`]'s [`MemoryStats`] while it lives. Fields drop in order: the
/// buffer is released before the count goes down.
pub(crate) struct DeviceBuffer {
    buffer: Buffer<u8>,
    reservation: Reservation,
}

impl DeviceBuffer {
    pub(crate) fn buffer(&self) -> &Buffer<u8> {
        &self.buffer
    }

    /// Size in bytes as requested (the allocation itself is at least one byte).
    pub(crate) fn bytes(&self) -> usize {
        self.reservation.bytes
    }
}

/// Chooses a device and options for a [`ClApp`]. All given filters must hold; among the devices that pass,
/// the best-ranked is taken (GPU, accelerator, CPU; then score; then index).
///
/// ```
/// use cliper::{ClApp, DeviceKind};
/// match ClApp::builder().device_type(DeviceKind::Gpu).vendor("nvidia").min_opencl_version(1, 2).build() {
///     Ok(app) => println!("NVIDIA GPU: {}", app.device().name),
///     Err(e) => println!("no NVIDIA GPU here: {e}"),
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct ClAppBuilder {
    filter: DeviceFilter,
    profiling: bool,
    use_env: bool,
    /// `None`: the environment's cache ([`ProgramCache::from_env`]); `Some(None)`: none; `Some(Some(c))`: `c`.
    cache: Option<Option<ProgramCache>>,
    memory_limit: Option<u64>,
}

impl ClAppBuilder {
    /// Only devices of this kind.
    pub fn device_type(mut self, kind: DeviceKind) -> Self {
        self.filter.kind = Some(kind);
        self
    }
    /// Only devices whose platform name contains `text` (case-insensitive).
    pub fn platform(mut self, text: &str) -> Self {
        self.filter.platform = Some(text.to_string());
        self
    }
    /// Only devices whose vendor contains `text` (case-insensitive).
    pub fn vendor(mut self, text: &str) -> Self {
        self.filter.vendor = Some(text.to_string());
        self
    }
    /// Only devices whose name contains `text` (case-insensitive).
    pub fn name(mut self, text: &str) -> Self {
        self.filter.name = Some(text.to_string());
        self
    }
    /// Only devices supporting at least OpenCL `major.minor`.
    pub fn min_opencl_version(mut self, major: u32, minor: u32) -> Self {
        self.filter.min_version = Some((major, minor));
        self
    }
    /// Turns on event profiling in the queue (needed for per-kernel profiles).
    pub fn profiling(mut self, on: bool) -> Self {
        self.profiling = on;
        self
    }
    /// A selection in the syntax of `CLIPER_DEVICE` (`gpu`, `cpu`, `1:0`, `h100`, …).
    pub fn select(mut self, spec: &str) -> Self {
        self.filter.spec = Some(spec.to_string());
        self
    }
    /// Whether `CLIPER_DEVICE`, when set, adds its selection (off by default; [`ClApp::new`] turns it on).
    pub fn use_env(mut self, on: bool) -> Self {
        self.use_env = on;
        self
    }
    /// The on-disk program cache to use: `None` for none (every program compiled from source, as a test of
    /// compiler warnings needs), `Some` for that one; by default the environment's for the device
    /// ([`ProgramCache::for_device`]: off on PoCL, which caches compiled kernels itself).
    ///
    /// ```
    /// let app = cliper::ClApp::builder().use_env(true).program_cache(None).build()?;
    /// assert!(app.program_cache().is_none());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn program_cache(mut self, cache: Option<ProgramCache>) -> Self {
        self.cache = Some(cache);
        self
    }

    /// At most this many bytes of device memory held at once by this `ClApp`'s arrays (default: the device's
    /// global memory, or [`MEMORY_LIMIT_ENV`] when set). Allocations past it fail with [`Error::OutOfMemory`];
    /// tiled chains size their tiles to it.
    ///
    /// ```
    /// let app = cliper::ClApp::builder().memory_limit(1 << 20).build()?;
    /// assert_eq!(app.memory_limit(), 1 << 20);
    /// let e = cliper::XData::<f32>::zeros(&app, &[1024, 1024]).unwrap_err();
    /// assert!(matches!(e, cliper::Error::OutOfMemory { .. }), "{e}");
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn memory_limit(mut self, bytes: u64) -> Self {
        self.memory_limit = Some(bytes);
        self
    }

    /// Opens every device that passes the filters (best first), each its own `ClApp` with these options: the
    /// devices of a pool ([`crate::DevicePool`]). `CLIPER_DEVICE` (with [`ClAppBuilder::use_env`]) and
    /// [`ClAppBuilder::select`] take sets here: `all`, `gpu:*`, or a list such as `0:0,0:1`.
    ///
    /// ```
    /// let apps = cliper::ClApp::builder().select("all").build_all()?;
    /// assert_eq!(apps.len(), cliper::ClApp::devices()?.len());
    /// assert_eq!(apps[0].device().id(), cliper::ClApp::builder().select("all").build()?.device().id());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn build_all(self) -> Result<Vec<ClApp>> {
        let mut filter = self.filter.clone();
        if self.use_env
            && let Some(spec) = env_selection()
        {
            filter.spec = Some(spec);
            filter.spec_from_env = true;
        }
        let infos: Vec<DeviceInfo> = discover()?.into_iter().map(|(i, _)| i).collect();
        let chosen = super::device::choose_all(&infos, &filter)?;
        chosen
            .into_iter()
            .filter_map(|i| infos.get(i))
            .map(|info| {
                let single = ClAppBuilder {
                    filter: DeviceFilter { spec: Some(info.id()), ..DeviceFilter::default() },
                    use_env: false,
                    ..self.clone()
                };
                single.build()
            })
            .collect()
    }

    /// Opens the chosen device: context, in-order queue, device facts.
    pub fn build(self) -> Result<ClApp> {
        let mut filter = self.filter;
        if self.use_env
            && let Some(spec) = env_selection()
        {
            filter.spec = Some(spec);
            filter.spec_from_env = true;
        }
        let mut found = discover()?;
        let infos: Vec<DeviceInfo> = found.iter().map(|(i, _)| i.clone()).collect();
        let index = choose(&infos, &filter)?;
        let (mut info, device) = found.swap_remove(index);
        info.preferred = true;
        let cache = self.cache.unwrap_or_else(|| ProgramCache::for_device(&info));
        let limit = match self.memory_limit {
            Some(bytes) => Some(bytes),
            None => match std::env::var(MEMORY_LIMIT_ENV) {
                Ok(text) if !text.trim().is_empty() => {
                    Some(parse_bytes(&text).map_err(|e| Error::invalid(MEMORY_LIMIT_ENV, format!("{e}")))?)
                }
                _ => None,
            },
        };
        let mut app = ClApp::open(info, device, self.profiling, cache)?;
        if let (Some(bytes), Some(inner)) = (limit, Arc::get_mut(&mut app.inner)) {
            inner.memory_limit = bytes.min(inner.info.global_mem_bytes);
        }
        Ok(app)
    }
}

impl ClApp {
    /// Every device (or the set `CLIPER_DEVICE` names: `all`, `gpu:*`, `0:0,0:1`), best first, each opened as
    /// its own `ClApp`.
    ///
    /// ```
    /// let apps = cliper::ClApp::all()?;
    /// assert!(!apps.is_empty());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn all() -> Result<Vec<ClApp>> {
        let mut builder = ClApp::builder().use_env(true);
        if env_selection().is_none() {
            builder = builder.select("all");
        }
        builder.build_all()
    }

    /// The best device (GPU, then accelerator, then CPU; highest score; lowest index), unless the environment
    /// variable `CLIPER_DEVICE` narrows the choice (see [`DEVICE_ENV`]). Profiling is off.
    ///
    /// ```
    /// let app = cliper::ClApp::new()?;
    /// let d = app.device();
    /// println!("{} on {}: {} compute units, {} MiB local memory", d.name, d.platform_name, d.compute_units, d.local_mem_bytes >> 20);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn new() -> Result<ClApp> {
        ClApp::builder().use_env(true).build()
    }

    /// A builder with filters and options.
    pub fn builder() -> ClAppBuilder {
        ClAppBuilder::default()
    }

    /// Every device of every platform; `preferred` marks the one [`ClApp::new`] would pick (none when
    /// `CLIPER_DEVICE` matches nothing).
    ///
    /// ```
    /// let devices = cliper::ClApp::devices()?;
    /// let chosen = devices.iter().find(|d| d.preferred).expect("a default device");
    /// assert_eq!(cliper::ClApp::new()?.device().id(), chosen.id());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn devices() -> Result<Vec<DeviceInfo>> {
        let mut infos: Vec<DeviceInfo> = discover()?.into_iter().map(|(i, _)| i).collect();
        let filter = DeviceFilter { spec: env_selection(), spec_from_env: true, ..DeviceFilter::default() };
        if let Ok(i) = choose(&infos, &filter)
            && let Some(info) = infos.get_mut(i)
        {
            info.preferred = true;
        }
        Ok(infos)
    }

    fn open(info: DeviceInfo, device: Device, profiling: bool, disk: Option<ProgramCache>) -> Result<ClApp> {
        let context =
            Context::from_device(&device).during(|| format!("creating an OpenCL context on `{}`", info.name))?;
        // A device with memory of its own (a discrete GPU) has host commands' regions copied, not mapped.
        // (CL_DEVICE_HOST_UNIFIED_MEMORY, deprecated from OpenCL 2.0 but answered; unknown counts as separate.)
        let staged = info.kind != DeviceKind::Cpu && !device.host_unified_memory().unwrap_or(false);
        let queue = ffi::Queue::create(&context, profiling, staged)
            .during(|| format!("creating a command queue on `{}`", info.name))?;
        let memory_limit = info.global_mem_bytes;
        Ok(ClApp {
            inner: Arc::new(Inner {
                queue,
                programs: Mutex::new(HashMap::new()),
                disk,
                context,
                device,
                info,
                profiling,
                transfers: TransferCounters::default(),
                memory: Arc::default(),
                memory_limit,
            }),
        })
    }

    /// Facts about the device this `ClApp` runs on.
    pub fn device(&self) -> &DeviceInfo {
        &self.inner.info
    }

    /// The on-disk program cache this app reads and fills, if any.
    pub fn program_cache(&self) -> Option<&ProgramCache> {
        self.inner.disk.as_ref()
    }

    /// Whether the queue records profiling events.
    pub fn profiling(&self) -> bool {
        self.inner.profiling
    }

    /// Waits until every command enqueued so far has finished.
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let x = cliper::XData::<f32>::zeros(&app, &[1024])?; // enqueues a fill
    /// app.finish()?; // the fill is done
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn finish(&self) -> Result<()> {
        self.inner.queue.finish().during(|| "waiting for the command queue to finish".into())
    }

    /// Host↔device copies made so far (a snapshot; subtract two to measure a stretch of work).
    pub fn transfer_stats(&self) -> TransferStats {
        let t = &self.inner.transfers;
        TransferStats {
            host_to_device_calls: t.h2d_calls.load(Ordering::Relaxed),
            host_to_device_bytes: t.h2d_bytes.load(Ordering::Relaxed),
            device_to_host_calls: t.d2h_calls.load(Ordering::Relaxed),
            device_to_host_bytes: t.d2h_bytes.load(Ordering::Relaxed),
        }
    }

    /// Whether the device can hold elements of type `T` (`f64` and `c64` need fp64).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// assert!(app.supports::<f32>());
    /// println!("double precision: {}", app.supports::<f64>());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn supports<T: Element>(&self) -> bool {
        !T::IS_DOUBLE || self.inner.info.fp64
    }

    /// `Ok` when [`ClApp::supports`] holds, else [`Error::Unsupported`] naming the type and the device.
    pub fn require<T: Element>(&self) -> Result<()> {
        check_fp64::<T>(&self.inner.info)
    }

    /// Whether two handles share one context (arrays of different `ClApp`s cannot meet in one kernel).
    ///
    /// ```
    /// let a = cliper::ClApp::new()?;
    /// assert!(a.same_as(&a.clone()));
    /// assert!(!a.same_as(&cliper::ClApp::new()?)); // a second context on the same device
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn same_as(&self, other: &ClApp) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    pub(crate) fn queue(&self) -> &ffi::Queue {
        &self.inner.queue
    }

    pub(crate) fn context(&self) -> &Context {
        &self.inner.context
    }

    pub(crate) fn cl_device(&self) -> &Device {
        &self.inner.device
    }

    /// Allocates `bytes` bytes of device memory. Refused with [`Error::OutOfMemory`], before the driver is asked,
    /// are sizes over the device's single-allocation limit and sizes that would take the bytes this `ClApp` holds
    /// past the device's global memory (drivers allocate lazily, so an over-commit would otherwise fail later, at
    /// first use, far from its cause).
    pub(crate) fn allocate(&self, bytes: usize, what: &str) -> Result<DeviceBuffer> {
        let info = &self.inner.info;
        let limit = info.max_alloc_bytes;
        let out_of_memory = |limit: String| Error::OutOfMemory { what: what.to_string(), bytes: bytes as u64, limit };
        if bytes as u64 > limit {
            return Err(out_of_memory(format!("`{}` allows at most {limit} bytes in one allocation", info.name)));
        }
        let counters = &self.inner.memory;
        // Counted before the driver call, so that threads allocating at once cannot all pass the check.
        let live = counters.live_bytes.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        counters.live_buffers.fetch_add(1, Ordering::Relaxed);
        let reservation = Reservation { bytes, counters: counters.clone() };
        let budget = self.inner.memory_limit;
        if live > budget {
            drop(reservation);
            let what = if budget < info.global_mem_bytes {
                format!("a memory limit of {budget} bytes ({MEMORY_LIMIT_ENV} or ClAppBuilder::memory_limit)")
            } else {
                format!("{budget} bytes of global memory")
            };
            return Err(out_of_memory(format!(
                "`{}` has {what} and this ClApp's arrays hold {} already",
                info.name,
                live - bytes as u64
            )));
        }
        match ffi::create_buffer(self.context(), bytes) {
            Ok(buffer) => {
                counters.allocations.fetch_add(1, Ordering::Relaxed);
                counters.peak_bytes.fetch_max(live, Ordering::Relaxed);
                Ok(DeviceBuffer { buffer, reservation })
            }
            // The reservation drops with the error.
            Err(e) => Err(e).during(|| format!("allocating {bytes} bytes for {what}")),
        }
    }

    /// The most bytes of device memory this `ClApp`'s arrays may hold at once: the device's global memory unless
    /// [`ClAppBuilder::memory_limit`] or [`MEMORY_LIMIT_ENV`] lowered it.
    ///
    /// ```
    /// let app = cliper::ClApp::new()?;
    /// assert!(app.memory_limit() <= app.device().global_mem_bytes);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn memory_limit(&self) -> u64 {
        self.inner.memory_limit
    }

    /// Device buffers alive now, their bytes, the peak, and the allocations so far.
    pub fn memory_stats(&self) -> MemoryStats {
        let m = &self.inner.memory;
        MemoryStats {
            live_buffers: m.live_buffers.load(Ordering::Relaxed),
            live_bytes: m.live_bytes.load(Ordering::Relaxed),
            peak_bytes: m.peak_bytes.load(Ordering::Relaxed),
            allocations: m.allocations.load(Ordering::Relaxed),
        }
    }

    /// Blocking host→device copy, counted in [`ClApp::transfer_stats`] as one transfer.
    pub(crate) fn upload<T: Element>(&self, buffer: &Buffer<u8>, offset_bytes: usize, data: &[T]) -> Result<Event> {
        self.upload_in_pieces(buffer, offset_bytes, data, CHUNK_BYTES)
    }

    fn upload_in_pieces<T: Element>(
        &self,
        buffer: &Buffer<u8>,
        offset_bytes: usize,
        data: &[T],
        piece_bytes: usize,
    ) -> Result<Event> {
        let bytes = std::mem::size_of_val(data);
        let per_piece = (piece_bytes / std::mem::size_of::<T>()).max(1);
        let mut last = None;
        for (k, piece) in data.chunks(per_piece).enumerate() {
            let at = offset_bytes + k * per_piece * std::mem::size_of::<T>();
            last = Some(
                ffi::write_buffer(self.queue(), buffer, at, piece)
                    .during(|| format!("copying {bytes} bytes from the host to the device"))?,
            );
        }
        let t = &self.inner.transfers;
        t.h2d_calls.fetch_add(1, Ordering::Relaxed);
        t.h2d_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        last.ok_or_else(|| Error::invalid("upload", "nothing to copy"))
    }

    /// Blocking device→host copy, counted in [`ClApp::transfer_stats`] as one transfer.
    pub(crate) fn download<T: Element>(&self, buffer: &Buffer<u8>, offset_bytes: usize, out: &mut [T]) -> Result<()> {
        self.download_in_pieces(buffer, offset_bytes, out, CHUNK_BYTES)
    }

    fn download_in_pieces<T: Element>(
        &self,
        buffer: &Buffer<u8>,
        offset_bytes: usize,
        out: &mut [T],
        piece_bytes: usize,
    ) -> Result<()> {
        let bytes = std::mem::size_of_val(out);
        let per_piece = (piece_bytes / std::mem::size_of::<T>()).max(1);
        for (k, piece) in out.chunks_mut(per_piece).enumerate() {
            let at = offset_bytes + k * per_piece * std::mem::size_of::<T>();
            ffi::read_buffer(self.queue(), buffer, at, piece)
                .during(|| format!("copying {bytes} bytes from the device to the host"))?;
        }
        let t = &self.inner.transfers;
        t.d2h_calls.fetch_add(1, Ordering::Relaxed);
        t.d2h_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn program_slot(&self, source: &str, options: &str) -> ProgramSlot {
        let mut map = self.inner.programs.lock().unwrap_or_else(|p| p.into_inner());
        map.entry((source.to_string(), options.to_string())).or_default().clone()
    }
}

/// The selection in `CLIPER_DEVICE`, when it is set and not blank.
fn env_selection() -> Option<String> {
    std::env::var(DEVICE_ENV).ok().filter(|spec| !spec.trim().is_empty())
}

/// [`Error::Unsupported`] when `T` needs fp64 and the device lacks it.
fn check_fp64<T: Element>(info: &DeviceInfo) -> Result<()> {
    if T::IS_DOUBLE && !info.fp64 {
        return Err(Error::Unsupported {
            what: format!(
                "{} elements need double precision, which `{}` does not support (no cl_khr_fp64)",
                T::NAME,
                info.name
            ),
        });
    }
    Ok(())
}

impl fmt::Debug for ClApp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClApp")
            .field("device", &self.inner.info.name)
            .field("platform", &self.inner.info.platform_name)
            .field("profiling", &self.inner.profiling)
            .finish()
    }
}

/// Transfers and fills are issued in pieces of at most this many bytes: NVIDIA's OpenCL driver (580, H100) never
/// finished a single 2 GiB write or fill, while 1 GiB pieces run at full speed.
const CHUNK_BYTES: usize = 1 << 30;

/// Zeroes `bytes` bytes at the start of `buffer` on the device, in pieces of at most [`CHUNK_BYTES`] with the
/// widest zero pattern the size allows; returns the last command's event (the queue is in order).
pub(crate) fn fill_zero(
    app: &ClApp,
    buffer: &Buffer<u8>,
    bytes: usize,
) -> std::result::Result<Event, opencl3::error_codes::ClError> {
    fill_zero_in_pieces(app, buffer, bytes, CHUNK_BYTES)
}

fn fill_zero_in_pieces(
    app: &ClApp,
    buffer: &Buffer<u8>,
    bytes: usize,
    piece_bytes: usize,
) -> std::result::Result<Event, opencl3::error_codes::ClError> {
    // NVIDIA's driver (580, on the H100) fills with a kernel that counts pattern-sized elements in 32 bits:
    // filling a 46341² f32 array (2³¹ + 4633 four-byte patterns) faulted and lost the context (tests/huge.rs),
    // while 21 GB in 16-byte patterns filled fine. So whole 16-byte patterns (reaching 32 GiB) fill the body
    // and the ragged tail of a size that is not a multiple of 16 (4, 8 or 12 bytes of f32 data) is written
    // from the host.
    let tail = if piece_bytes.is_multiple_of(16) && bytes.is_multiple_of(4) { bytes % 16 } else { 0 };
    let body = bytes - tail;
    let pattern =
        [16, 8, 4, 2, 1].into_iter().find(|&p| body.is_multiple_of(p) && piece_bytes.is_multiple_of(p)).unwrap_or(1);
    let mut start = 0;
    let mut last = None;
    while start < body {
        let len = (body - start).min(piece_bytes);
        last = Some(ffi::fill_zero(app.queue(), buffer, start, len, pattern)?);
        start += len;
    }
    if tail > 0 {
        let zeros = [0f32; 4];
        last = Some(ffi::write_buffer(app.queue(), buffer, body, zeros.get(..tail / 4).unwrap_or_default())?);
    }
    // Zero bytes, the one case with no command, is refused as OpenCL refuses a zero-size fill.
    last.ok_or(opencl3::error_codes::ClError(opencl3::error_codes::CL_INVALID_VALUE))
}

/// Device-to-device copy of `bytes` bytes from `src_offset` to `dst_offset` (the caller tracks the command),
/// with its event when `want_event`.
pub(crate) fn copy_buffer(
    app: &ClApp,
    src: &Buffer<u8>,
    dst: &Buffer<u8>,
    (src_offset, dst_offset, bytes): (usize, usize, usize),
    want_event: bool,
) -> std::result::Result<Option<Event>, opencl3::error_codes::ClError> {
    ffi::copy_buffer(app.queue(), src, dst, (src_offset, dst_offset, bytes), want_event)
}

/// A marker on `app`'s queue: its event completes once every command enqueued before it has.
pub(crate) fn marker(app: &ClApp) -> std::result::Result<Event, opencl3::error_codes::ClError> {
    ffi::marker(app.queue())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfers_and_fills_in_pieces_cover_everything_once() {
        let app = ClApp::new().unwrap();
        let n = 1001usize;
        let data: Vec<f64> = (0..n).map(|v| v as f64 + 0.5).collect();
        let allocation = app.allocate(8 * (n + 3), "test").unwrap();
        let buffer = allocation.buffer();
        // Pieces of 5 elements (40 bytes) and a ragged last piece, at an offset of 3 elements.
        app.upload_in_pieces(buffer, 24, &data, 40).unwrap();
        let mut back = vec![0.0f64; n];
        app.download_in_pieces(buffer, 24, &mut back, 56).unwrap();
        assert_eq!(back, data);
        let before = app.transfer_stats();
        fill_zero_in_pieces(&app, buffer, 8 * (n + 3) - 8, 48).unwrap();
        let mut after = vec![1.0f64; n + 3];
        app.download_in_pieces(buffer, 0, &mut after, 1 << 20).unwrap();
        assert!(after[..n + 2].iter().all(|&v| v == 0.0));
        assert_eq!(after[n + 2], data[n - 1], "the fill must stop at its size");
        assert_eq!((app.transfer_stats() - before).device_to_host_calls, 1, "one logical transfer");
    }

    #[test]
    fn fp64_check_names_type_and_device() {
        let mut info = ClApp::devices().unwrap().remove(0);
        info.fp64 = false;
        info.name = "Tiny GPU".into();
        let err = check_fp64::<num_complex::Complex<f64>>(&info).unwrap_err().to_string();
        assert!(err.contains("c64") && err.contains("Tiny GPU"), "{err}");
        assert!(check_fp64::<f32>(&info).is_ok());
    }
}
