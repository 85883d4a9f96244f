//! The one error type of cliper and its `Result` alias.
//!
//! Every fallible function of the crate returns [`Result`]. Variants carry what a user needs to fix the problem:
//! OpenCL errors name the code (`CL_OUT_OF_RESOURCES`) and what was being done, shape errors name both shapes,
//! build errors carry the compiler's full log.

use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong in cliper.
///
/// ```
/// use cliper::Error;
/// let e = Error::Shape { op: "Transpose".into(), expected: "[3, 2]".into(), got: "[2, 3]".into() };
/// assert_eq!(e.to_string(), "Transpose: shape mismatch: expected [3, 2], got [2, 3]");
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An OpenCL call failed; `name` is the symbolic code (`CL_OUT_OF_RESOURCES`, …).
    #[error("OpenCL error {name} ({code}) while {during}")]
    Cl {
        /// The numeric OpenCL error code.
        code: i32,
        /// The symbolic name of `code`.
        name: &'static str,
        /// What cliper was doing when the call failed.
        during: String,
    },
    /// An OpenCL program failed to compile; `log` is the compiler's full build log.
    #[error("OpenCL program `{program}` failed to build:\n{log}")]
    Build {
        /// The program's name (the kernel source family and its build options).
        program: String,
        /// The full build log reported by the OpenCL compiler.
        log: String,
    },
    /// An array has the wrong shape for an operation.
    #[error("{op}: shape mismatch: expected {expected}, got {got}")]
    Shape {
        /// The operation that checked the shape.
        op: String,
        /// The shape the operation needs.
        expected: String,
        /// The shape it was given.
        got: String,
    },
    /// An argument has the wrong element type, or a file holds a type that cannot be converted.
    #[error("{op}: type mismatch: expected {expected}, got {got}")]
    Type {
        /// The operation that checked the type.
        op: String,
        /// The type the operation needs.
        expected: String,
        /// The type it was given.
        got: String,
    },
    /// A file's value that the element type it is loaded as cannot hold exactly (a 32-bit integer past 2²⁴, an f64
    /// with more digits than f32): loading it would change the data.
    #[error(
        "loading {}: type mismatch: expected {wanted}, got {} (value {value} is not exactly representable as {wanted})",
        path.display(),
        stored
    )]
    Inexact {
        /// The file.
        path: PathBuf,
        /// The type the file stores (`i32`, `f64`, …).
        stored: &'static str,
        /// The first value that would change, as text.
        value: String,
        /// The element type it was to be loaded as.
        wanted: &'static str,
    },
    /// An argument is out of range or inconsistent (an axis that does not exist, a bad permutation, …).
    #[error("{op}: {reason}")]
    InvalidArgument {
        /// The operation that rejected the argument.
        op: String,
        /// What was wrong.
        reason: String,
    },
    /// The device or the build lacks a feature the operation needs (fp64, a rank above the kernels' limit…).
    #[error("unsupported: {what}")]
    Unsupported {
        /// What is missing.
        what: String,
    },
    /// No OpenCL device can be used; `reason` says why and how to fix it.
    #[error("no OpenCL device: {reason}")]
    NoDevice {
        /// Why no device is available, with the fix.
        reason: String,
    },
    /// A device selection (`CLIPER_DEVICE`, `--device` or a builder filter) matched no device.
    #[error("device selection `{spec}` matches no OpenCL device; available devices:\n{available}")]
    DeviceSelection {
        /// The selection that matched nothing.
        spec: String,
        /// One line per device that exists, to choose from.
        available: String,
    },
    /// The device cannot hold an allocation.
    #[error("out of device memory: {what} needs {bytes} bytes; {limit}")]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// The requested size.
        bytes: u64,
        /// The device limit that was exceeded.
        limit: String,
    },
    /// Data a file holds (or claims to hold) does not fit the host memory budget (`CLIPER_HOST_MEMORY_LIMIT`, or
    /// the memory available): refused before anything is allocated.
    #[error("{}: {what} needs {bytes} bytes of host memory; the host budget is {budget} bytes ({source_of_budget})", path.display())]
    HostMemory {
        /// The file.
        path: PathBuf,
        /// What would have been allocated.
        what: String,
        /// Bytes it needs.
        bytes: u64,
        /// Bytes the budget allows.
        budget: u64,
        /// Where the budget comes from (the environment variable, /proc/meminfo, the cgroup).
        source_of_budget: String,
    },
    /// An array was read (or used as input) after the process that writes it failed.
    #[error("array is invalid because its producer `{producer}` failed: {cause}")]
    ProducerFailed {
        /// The process (and kernel) whose launch failed.
        producer: String,
        /// The failure of that producer.
        #[source]
        cause: Arc<Error>,
    },
    /// A process was launched before `init` succeeded.
    #[error("{op}: launch() called before a successful init()")]
    NotInitialized {
        /// The process.
        op: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A file's contents are not valid for its format.
    #[error("{}: {reason}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl Clone for Error {
    /// A copy with the same variant and fields; an I/O error is copied as its kind and message.
    fn clone(&self) -> Self {
        match self {
            Error::Cl { code, name, during } => Error::Cl { code: *code, name, during: during.clone() },
            Error::Build { program, log } => Error::Build { program: program.clone(), log: log.clone() },
            Error::Shape { op, expected, got } => {
                Error::Shape { op: op.clone(), expected: expected.clone(), got: got.clone() }
            }
            Error::Type { op, expected, got } => {
                Error::Type { op: op.clone(), expected: expected.clone(), got: got.clone() }
            }
            Error::Inexact { path, stored, value, wanted } => {
                Error::Inexact { path: path.clone(), stored, value: value.clone(), wanted }
            }
            Error::InvalidArgument { op, reason } => Error::InvalidArgument { op: op.clone(), reason: reason.clone() },
            Error::Unsupported { what } => Error::Unsupported { what: what.clone() },
            Error::NoDevice { reason } => Error::NoDevice { reason: reason.clone() },
            Error::DeviceSelection { spec, available } => {
                Error::DeviceSelection { spec: spec.clone(), available: available.clone() }
            }
            Error::OutOfMemory { what, bytes, limit } => {
                Error::OutOfMemory { what: what.clone(), bytes: *bytes, limit: limit.clone() }
            }
            Error::HostMemory { path, what, bytes, budget, source_of_budget } => Error::HostMemory {
                path: path.clone(),
                what: what.clone(),
                bytes: *bytes,
                budget: *budget,
                source_of_budget: source_of_budget.clone(),
            },
            Error::ProducerFailed { producer, cause } => {
                Error::ProducerFailed { producer: producer.clone(), cause: cause.clone() }
            }
            Error::NotInitialized { op } => Error::NotInitialized { op: op.clone() },
            Error::Io { path, source } => {
                Error::Io { path: path.clone(), source: std::io::Error::new(source.kind(), source.to_string()) }
            }
            Error::Format { path, reason } => Error::Format { path: path.clone(), reason: reason.clone() },
        }
    }
}

/// `std::result::Result` with cliper's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An OpenCL error from its numeric code and a description of what was being done.
    ///
    /// ```
    /// let e = cliper::Error::cl(-5, "enqueueing kernel `k`");
    /// assert!(e.to_string().contains("CL_OUT_OF_RESOURCES"));
    /// ```
    pub fn cl(code: i32, during: impl Into<String>) -> Self {
        Error::Cl { code, name: cl_error_name(code), during: during.into() }
    }

    /// Shorthand for [`Error::InvalidArgument`] (for processes written outside cliper too).
    ///
    /// ```
    /// let e = cliper::Error::invalid("MyFilter", "sigma must be positive, got -1");
    /// assert_eq!(e.to_string(), "MyFilter: sigma must be positive, got -1");
    /// ```
    pub fn invalid(op: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidArgument { op: op.into(), reason: reason.into() }
    }

    /// Shorthand for [`Error::Shape`] that formats both shapes.
    ///
    /// ```
    /// let e = cliper::Error::shape("MyFilter", &[3, 4], &[4, 3]);
    /// assert!(e.to_string().contains("[3, 4]") && e.to_string().contains("[4, 3]"));
    /// ```
    pub fn shape(op: impl Into<String>, expected: &[usize], got: &[usize]) -> Self {
        Error::Shape { op: op.into(), expected: format!("{expected:?}"), got: format!("{got:?}") }
    }
}

/// The symbolic name of an OpenCL error code (`-5` → `CL_OUT_OF_RESOURCES`).
///
/// ```
/// assert_eq!(cliper::cl_error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
/// assert_eq!(cliper::cl_error_name(-2000), "DLOPEN_RUNTIME_LOAD_FAILED");
/// ```
pub fn cl_error_name(code: i32) -> &'static str {
    opencl3::error_codes::error_text(code)
}

/// Turns opencl3's error into cliper's, naming what was being done. The closure runs only on failure.
pub(crate) trait ClContext<T> {
    fn during(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> ClContext<T> for std::result::Result<T, opencl3::error_codes::ClError> {
    fn during(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::cl(e.0, what()))
    }
}
