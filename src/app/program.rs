//! Building OpenCL programs (once per source, options and device) and creating kernels from them.

use super::cl_app::{BUILD_OPTIONS_ENV, ClApp};
use super::ffi;
use super::program_cache::Key;
use crate::error::{ClContext, Error, Result};
use opencl3::error_codes::{CL_BUILD_PROGRAM_FAILURE, CL_COMPILE_PROGRAM_FAILURE, CL_INVALID_BUILD_OPTIONS};
use std::sync::Arc;

/// Whether launches compare the argument names they pass with the kernel's own parameter names
/// ([`crate::Launch`]): on in debug builds (every `cargo test`), off in release builds, where it would cost a build
/// option that changes the driver's code cache and a name lookup per kernel. When on, every program is built with
/// `-cl-kernel-arg-info` (which also enters the on-disk cache key, so a binary cached without argument names never
/// reaches a checking process).
pub(crate) const CHECK_ARGUMENT_NAMES: bool = cfg!(debug_assertions);

/// The option that makes the driver keep each kernel's parameter names (`clGetKernelArgInfo`).
const ARG_INFO_OPTION: &str = "-cl-kernel-arg-info";

/// A built OpenCL program. Built programs are cached per `ClApp` by (source, options), so asking again for the
/// same program costs a map lookup, not a compile; and on disk ([`crate::ProgramCache`]), so the next process
/// loads the driver's binary instead of compiling.
///
/// ```
/// # let app = cliper::ClApp::new()?;
/// let src = "kernel void twice(global float* x) { x[get_global_id(0)] *= 2.0f; }";
/// let program = app.build_program("twice", src, "")?;
/// let kernel = program.kernel("twice")?;
/// assert_eq!(kernel.name(), "twice");
/// // A broken source reports the compiler's log:
/// let err = app.build_program("broken", "kernel void f( {", "").unwrap_err();
/// assert!(matches!(err, cliper::Error::Build { .. }));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone)]
pub struct Program {
    program: Arc<opencl3::program::Program>,
    name: String,
    app: ClApp,
    from_disk: bool,
}

impl ClApp {
    /// Builds `source` with `options` for this device, or returns the cached build.
    ///
    /// `name` is used in messages only. Every build gets `-cl-std=CL1.2` in front of `options`, so kernels
    /// stay within the OpenCL C subset that both PoCL and NVIDIA compile. A compile error returns
    /// [`Error::Build`] with the full compiler log.
    pub fn build_program(&self, name: &str, source: &str, options: &str) -> Result<Program> {
        self.build(name, source, options, None)
    }

    /// Builds `source` as [`ClApp::build_program`] does, then retargets the program to `sm_90a` (Hopper's
    /// architecture-specific instructions, such as `wgmma`) and builds that: every line of the program's PTX that
    /// starts with `//@sm90a ` (a comment the OpenCL compiler passes through with its operands substituted) becomes
    /// an instruction. The options get `-DCLIPER_SM90A=1`, which also keeps the build apart from the plain one in
    /// both caches.
    ///
    /// Only NVIDIA GPUs of compute capability 9.x run `sm_90a` code; any other device, or a driver whose binary is
    /// not PTX for `sm_90`, gets [`crate::Error::Unsupported`] saying which.
    ///
    /// ```
    /// let app = cliper::ClApp::new()?;
    /// let src = "kernel void fence() { asm volatile(\"//@sm90a wgmma.fence.sync.aligned;\" ::: \"memory\"); }";
    /// match app.build_program_sm90a("fence", src, "") {
    ///     Ok(program) => assert!(program.kernel("fence").is_ok()),
    ///     Err(e) => assert!(matches!(e, cliper::Error::Unsupported { .. }), "{e}"),
    /// }
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn build_program_sm90a(&self, name: &str, source: &str, options: &str) -> Result<Program> {
        let info = self.device();
        if info.compute_capability.map(|(major, _)| major) != Some(9) {
            return Err(Error::Unsupported {
                what: format!(
                    "sm_90a code (program `{name}`) needs an NVIDIA GPU of compute capability 9.x; device: {}",
                    info.name
                ),
            });
        }
        self.build(name, source, &format!("{options} -DCLIPER_SM90A=1"), Some(super::ptx_patch::retarget_sm90a))
    }

    /// The program `build_program` would return when it needs no compile: built already in this `ClApp`, or in the
    /// on-disk cache. `None` when it would compile (or another thread is building it now).
    pub(crate) fn built_program(&self, name: &str, source: &str, options: &str) -> Result<Option<Program>> {
        let build = self.build_request(name, options)?;
        let slot = self.program_slot(source, &build.options);
        let Ok(mut cached) = slot.try_lock() else { return Ok(None) };
        Ok(self.find_built(source, &build, &mut cached))
    }

    /// The build of `build_program`, with `patch` applied to the driver's binary of a build from source and the
    /// result built again (the disk cache then keeps the patched program).
    fn build(&self, name: &str, source: &str, options: &str, patch: Option<PtxPatch>) -> Result<Program> {
        let build = self.build_request(name, options)?;
        let slot = self.program_slot(source, &build.options);
        // Held through the compile: a second thread asking for the same program waits for this build.
        let mut cached = slot.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(program) = self.find_built(source, &build, &mut cached) {
            return Ok(program);
        }
        let started = std::time::Instant::now();
        let device_id = self.cl_device().id();
        let (name, options, full_options) = (build.name, build.options.as_str(), build.full_options.as_str());
        let mut program = opencl3::program::Program::create_from_source(self.context(), source)
            .during(|| format!("creating program `{name}`"))?;
        if let Err(e) = program.build(&[device_id], full_options) {
            return Err(build_error(&program, device_id, e.0, name, options));
        }
        if let Some(patch) = patch {
            let binaries = program.get_binaries().during(|| format!("reading the binary of program `{name}`"))?;
            let patched = patch(binaries.first().map(Vec::as_slice).unwrap_or_default())?;
            program = ffi::program_from_binary(self.context(), device_id, &patched)
                .during(|| format!("creating program `{name}` from its patched binary"))?;
            if let Err(e) = program.build(&[device_id], full_options) {
                return Err(build_error(&program, device_id, e.0, &format!("{name} (patched)"), options));
            }
        }
        log_build(name, "from source", started, options);
        if let Some(log) = build_log_to_show(&program, device_id) {
            eprintln!("{log}");
        }
        if let (Some(disk), Some(key)) = (self.program_cache(), self.cache_key(source, &build))
            && let Ok(binaries) = program.get_binaries()
            && let Some(binary) = binaries.first()
        {
            // A cache that cannot be written (read-only home, full disk) costs the next process a compile, no more.
            let _ = disk.store(&key, binary);
        }
        let program = Arc::new(program);
        *cached = Some(program.clone());
        Ok(Program { program, name: name.to_string(), app: self.clone(), from_disk: false })
    }

    /// What a build is asked for: its options with `CLIPER_BUILD_OPTIONS` added, and the full options the driver
    /// gets.
    fn build_request<'a>(&self, name: &'a str, options: &str) -> Result<BuildRequest<'a>> {
        if options.contains('\0') {
            return Err(Error::invalid("build_program", format!("options of `{name}` contain a NUL byte")));
        }
        static EXTRA: std::sync::LazyLock<String> =
            std::sync::LazyLock::new(|| std::env::var(BUILD_OPTIONS_ENV).unwrap_or_default().replace('\0', ""));
        let options = if EXTRA.trim().is_empty() { options.to_string() } else { format!("{options} {}", *EXTRA) };
        let arg_info = if CHECK_ARGUMENT_NAMES { ARG_INFO_OPTION } else { "" };
        let full_options = format!("-cl-std=CL1.2 {arg_info} {options}");
        Ok(BuildRequest { name, options, full_options })
    }

    /// The key of `source` built as `build` asks in the on-disk cache, when this `ClApp` has one (a digest of the
    /// source: computed only when the disk is asked).
    fn cache_key(&self, source: &str, build: &BuildRequest<'_>) -> Option<Key> {
        self.program_cache().map(|_| Key::new(source, &build.full_options, self.device()))
    }

    /// The program of `build` in `cached` (this `ClApp`'s slot for it, locked), else loaded from the on-disk cache
    /// into that slot; `None` when neither has it.
    fn find_built(
        &self,
        source: &str,
        build: &BuildRequest<'_>,
        cached: &mut Option<Arc<opencl3::program::Program>>,
    ) -> Option<Program> {
        let name = build.name.to_string();
        if let Some(program) = cached.as_ref() {
            return Some(Program { program: program.clone(), name, app: self.clone(), from_disk: false });
        }
        let started = std::time::Instant::now();
        let device_id = self.cl_device().id();
        // The on-disk cache: a binary an earlier process compiled, if one is there and the driver takes it.
        let (disk, key) = (self.program_cache()?, self.cache_key(source, build)?);
        let binary = disk.load(&key)?;
        let built = ffi::program_from_binary(self.context(), device_id, &binary)
            .and_then(|mut p| p.build(&[device_id], &build.full_options).map(|()| p));
        match built {
            // A checking process needs the parameter names; a driver that keeps none in its binaries (they are a
            // compiler's product, not every driver stores them) gets a compile from source instead.
            Ok(program) if CHECK_ARGUMENT_NAMES && !keeps_argument_names(&program) => None,
            Ok(program) => {
                log_build(build.name, "from the disk cache", started, &build.options);
                let program = Arc::new(program);
                *cached = Some(program.clone());
                Some(Program { program, name, app: self.clone(), from_disk: true })
            }
            // Refused (another driver's binary that slipped through, or a damaged one): compile instead.
            Err(_) => {
                disk.remove(&key);
                None
            }
        }
    }
}

/// One program a `ClApp` is asked to build (see `ClApp::build_request`).
struct BuildRequest<'a> {
    name: &'a str,
    options: String,
    full_options: String,
}

/// A transformation of a driver's binary before it is built again ([`ClApp::build_program_sm90a`]).
type PtxPatch = fn(&[u8]) -> Result<Vec<u8>>;

/// The error of a failed build of `program`: [`Error::Build`] with the compiler's log for a source or option
/// problem, the OpenCL error otherwise.
fn build_error(
    program: &opencl3::program::Program,
    device: opencl3::types::cl_device_id,
    code: i32,
    name: &str,
    options: &str,
) -> Error {
    let log = program.get_build_log(device).unwrap_or_default();
    match code {
        CL_BUILD_PROGRAM_FAILURE | CL_COMPILE_PROGRAM_FAILURE | CL_INVALID_BUILD_OPTIONS => Error::Build {
            program: format!("{name} [{options}]"),
            log: if log.trim().is_empty() {
                format!("(the compiler gave no log; the build returned {})", crate::error::cl_error_name(code))
            } else {
                log
            },
        },
        code => Error::cl(code, format!("building program `{name}` [{options}]")),
    }
}

/// Whether `CLIPER_LOG_BUILDS` asks for a line per build.
fn logging_builds() -> bool {
    static ON: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        std::env::var(super::LOG_BUILDS_ENV).is_ok_and(|v| !v.trim().is_empty() && v.trim() != "0")
    });
    *ON
}

/// The compiler's log of a successful build when builds are logged and it said anything (NVIDIA's ptxas report
/// under `-cl-nv-verbose`: registers, spills, serialised wgmma).
fn build_log_to_show(program: &opencl3::program::Program, device: opencl3::types::cl_device_id) -> Option<String> {
    let log = if logging_builds() { program.get_build_log(device).unwrap_or_default() } else { String::new() };
    (!log.trim().is_empty()).then(|| log.trim_end().to_string())
}

/// One line on stderr for a program built `how` since `started`, when `CLIPER_LOG_BUILDS` asks for it.
fn log_build(name: &str, how: &str, started: std::time::Instant, options: &str) {
    if logging_builds() {
        let ms = started.elapsed().as_secs_f64() * 1e3;
        eprintln!("cliper: built {name} {how} in {ms:.1} ms [{}]", options.trim());
    }
}

/// Whether a program loaded from a binary still names its kernels' parameters: its first kernel with any is
/// asked for the first name.
fn keeps_argument_names(program: &opencl3::program::Program) -> bool {
    let names = program.kernel_names();
    let Some(first) = names.split(';').find(|n| !n.is_empty()) else { return true };
    let Ok(kernel) = opencl3::kernel::Kernel::create(program, first) else { return false };
    match kernel.num_args() {
        Ok(0) => true,
        Ok(_) => kernel.get_arg_name(0).is_ok(),
        Err(_) => false,
    }
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program").field("name", &self.name).field("device", &self.app.device().name).finish()
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("name", &self.name).field("owner", &self.owner).finish()
    }
}

impl Program {
    /// Creates a kernel object for the kernel function `name`.
    ///
    /// Each process creates its own kernel objects, because a kernel's arguments are state: two processes
    /// sharing one kernel object would overwrite each other's arguments.
    pub fn kernel(&self, name: &str) -> Result<Kernel> {
        if name.contains('\0') {
            return Err(Error::invalid("Program::kernel", "kernel name contains a NUL byte"));
        }
        let kernel = opencl3::kernel::Kernel::create(&self.program, name)
            .during(|| format!("creating kernel `{name}` from program `{}`", self.name))?;
        let arg_names = if CHECK_ARGUMENT_NAMES { Some(self.argument_names(&kernel, name)?) } else { None };
        Ok(Kernel { kernel, name: name.to_string(), owner: name.to_string(), app: self.app.clone(), arg_names })
    }

    /// The parameter names of kernel `name` as its source declares them, for the checks of [`crate::Launch`]; an
    /// error when the driver gives none (the program was built with `-cl-kernel-arg-info`: a driver that ignores
    /// it would leave every launch unchecked, which a checking build must not do silently).
    fn argument_names(&self, kernel: &opencl3::kernel::Kernel, name: &str) -> Result<Arc<[String]>> {
        let count = kernel.num_args().during(|| format!("counting the arguments of kernel `{name}`"))?;
        (0..count)
            .map(|i| {
                kernel
                    .get_arg_name(i)
                    .during(|| format!("reading the name of argument {i} of kernel `{name}` (program `{}`)", self.name))
            })
            .collect()
    }

    /// The name given to [`ClApp::build_program`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether this build came from the on-disk cache (a binary an earlier process compiled) rather than the
    /// compiler.
    pub fn from_disk_cache(&self) -> bool {
        self.from_disk
    }

    /// The program as the driver compiled it for the device (`CL_PROGRAM_BINARIES`): PTX text on NVIDIA, which
    /// shows the instruction mix a kernel got; other drivers return their own formats (or nothing).
    ///
    /// ```
    /// # let app = cliper::ClApp::new()?;
    /// let program = app.build_program("twice", "kernel void twice(global float* x) { x[0] *= 2.0f; }", "")?;
    /// let _binary: Vec<u8> = program.binary()?;
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn binary(&self) -> Result<Vec<u8>> {
        let binaries =
            self.program.get_binaries().during(|| format!("reading the binary of program `{}`", self.name))?;
        Ok(binaries.into_iter().next().unwrap_or_default())
    }

    /// The compiler's log of the build (often empty when it succeeded; NVIDIA's `-cl-nv-verbose` fills it with
    /// each kernel's registers and spills).
    pub fn build_log(&self) -> Result<String> {
        self.program
            .get_build_log(self.app.cl_device().id())
            .during(|| format!("reading the build log of program `{}`", self.name))
    }
}

/// A kernel object: a function of a built [`Program`] with its argument state. Launch it with
/// [`Kernel::launch`].
///
/// ```
/// use cliper::{ClApp, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[1.0f32, 2.0, 3.0, 4.0])?;
/// let src = "kernel void twice(global float* x, ulong n) { size_t i = get_global_id(0); if (i < n) x[i] *= 2.0f; }";
/// let mut kernel = app.build_program("twice", src, "")?.kernel("twice")?.owned_by("Twice");
/// kernel.launch().in_out("x", &x).scalar("n", 4u64).global(&[4]).enqueue()?;
/// assert_eq!(x.to_vec()?, vec![2.0, 4.0, 6.0, 8.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Kernel {
    pub(crate) kernel: opencl3::kernel::Kernel,
    pub(crate) name: String,
    pub(crate) owner: String,
    pub(crate) app: ClApp,
    /// The parameter names the kernel declares, when launches check them ([`CHECK_ARGUMENT_NAMES`]).
    pub(crate) arg_names: Option<Arc<[String]>>,
}

impl Kernel {
    /// The kernel function's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process this kernel belongs to, as named in profiles and in errors about arrays it failed to
    /// write (defaults to the kernel's own name).
    pub fn owned_by(mut self, owner: impl Into<String>) -> Self {
        self.owner = owner.into();
        self
    }

    /// The owner set by [`Kernel::owned_by`].
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The largest work-group size this kernel can be launched with on its device.
    pub fn max_work_group_size(&self) -> Result<usize> {
        self.kernel
            .get_work_group_size(self.app.cl_device().id())
            .during(|| format!("querying the work-group size of kernel `{}`", self.name))
    }

    /// Private memory per work-item the compiled kernel uses (`CL_KERNEL_PRIVATE_MEM_SIZE`): on GPUs, bytes
    /// that did not fit in registers and went to off-chip memory.
    pub fn private_mem_bytes(&self) -> Result<u64> {
        self.kernel
            .get_private_mem_size(self.app.cl_device().id())
            .during(|| format!("querying the private memory of kernel `{}`", self.name))
    }
}
