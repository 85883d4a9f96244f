//! The one error type of cliper and its `Result` alias.
//!
//! Every fallible function of the crate returns [`Result`]. Variants carry what a user needs to fix the problem:
//! OpenCL errors name the code (`CL_OUT_OF_RESOURCES`) and what was being done, shape errors name both shapes,
//! build errors carry the compiler's full log. Shapes, element types and axes are typed fields: code that decides
//! what to do with an error matches on them, never on its text.

use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong in cliper.
///
/// Shapes, element types and axes are typed fields, so code decides by matching on them, never on the text:
///
/// ```
/// use cliper::Error;
/// let e = Error::shape("Transpose", &[3, 2], &[2, 3]);
/// assert_eq!(e.to_string(), "Transpose: shape mismatch: expected [3, 2], got [2, 3]");
/// assert!(matches!(e, Error::Shape { ref got, .. } if got == &[2, 3]));
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
    /// An array has the wrong shape for an operation, which needs one shape: `expected`.
    #[error("{op}: shape mismatch: expected {expected:?}{}, got {got:?}", parenthesized(why))]
    Shape {
        /// The operation that checked the shape.
        op: String,
        /// The shape the operation needs.
        expected: Vec<usize>,
        /// The shape it was given.
        got: Vec<usize>,
        /// Where `expected` comes from (`the input's shape`, `the input [3, 4] padded by …`), shown in parentheses
        /// after it; `None` when the operation's name says enough.
        why: Option<String>,
    },
    /// An array's shape breaks a rule that no single expected shape states (`a square matrix`, `a structure of 3
    /// per axis over the 2 axes spanned`).
    #[error("{op}: shape mismatch: expected {rule}, got {got:?}")]
    ShapeRule {
        /// The operation that checked the shape.
        op: String,
        /// What the shape must be, in words.
        rule: String,
        /// The shape it was given.
        got: Vec<usize>,
    },
    /// Input shapes that do not broadcast together under numpy's rules.
    #[error(
        "{op}: shape mismatch: expected input shapes that broadcast together (numpy's rules), got {}",
        joined(shapes)
    )]
    Broadcast {
        /// The operation that broadcasts its inputs.
        op: String,
        /// Every input's shape, in order.
        shapes: Vec<Vec<usize>>,
    },
    /// A buffer of host values whose length is not the number of elements of the shape it is to fill or fill from.
    #[error("{op}: shape mismatch: expected {} elements for shape {shape:?}, got {got} elements", shape.iter().product::<usize>())]
    Length {
        /// The operation that checked the length.
        op: String,
        /// The array's shape.
        shape: Vec<usize>,
        /// The number of values given.
        got: usize,
    },
    /// An axis that the array does not have (counted from the end when negative, as numpy does).
    #[error("{op}: axis {axis} does not exist in an array of shape {shape:?} ({} axes)", shape.len())]
    Axis {
        /// The operation that was given the axis.
        op: String,
        /// The axis as given.
        axis: isize,
        /// The shape of the array it was to index.
        shape: Vec<usize>,
    },
    /// An argument has the wrong element type (`f32`, `c64`, `u16`: the names of `Element::NAME` and
    /// `Dtype::name`), or a file holds a type that cannot be converted.
    #[error("{op}: type mismatch: expected {expected}, got {got}{}", parenthesized(note))]
    Type {
        /// The operation that checked the type.
        op: String,
        /// The element type the operation needs.
        expected: &'static str,
        /// The element type it was given.
        got: &'static str,
        /// Why the two do not go together or what to do, shown in parentheses after both; `None` when the types
        /// say enough.
        note: Option<String>,
    },
    /// An argument's element type breaks a rule that no single expected type states (`real coordinates of the
    /// data's precision`, `an output of c32 or f32`).
    #[error("{op}: type mismatch: expected {rule}, got {got}")]
    TypeRule {
        /// The operation that checked the type.
        op: String,
        /// What the type must be, in words.
        rule: String,
        /// The element type it was given (`Element::NAME`, `Dtype::name`).
        got: &'static str,
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
    /// An argument is out of range or inconsistent (a bad permutation, a negative sigma, …).
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
            Error::Shape { op, expected, got, why } => {
                Error::Shape { op: op.clone(), expected: expected.clone(), got: got.clone(), why: why.clone() }
            }
            Error::ShapeRule { op, rule, got } => {
                Error::ShapeRule { op: op.clone(), rule: rule.clone(), got: got.clone() }
            }
            Error::Broadcast { op, shapes } => Error::Broadcast { op: op.clone(), shapes: shapes.clone() },
            Error::Length { op, shape, got } => Error::Length { op: op.clone(), shape: shape.clone(), got: *got },
            Error::Axis { op, axis, shape } => Error::Axis { op: op.clone(), axis: *axis, shape: shape.clone() },
            Error::Type { op, expected, got, note } => {
                Error::Type { op: op.clone(), expected, got, note: note.clone() }
            }
            Error::TypeRule { op, rule, got } => Error::TypeRule { op: op.clone(), rule: rule.clone(), got },
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

    /// Shorthand for [`Error::Shape`] whose operation says why `expected` is needed.
    ///
    /// ```
    /// let e = cliper::Error::shape("MyFilter", &[3, 4], &[4, 3]);
    /// assert_eq!(e.to_string(), "MyFilter: shape mismatch: expected [3, 4], got [4, 3]");
    /// ```
    pub fn shape(op: impl Into<String>, expected: &[usize], got: &[usize]) -> Self {
        Error::Shape { op: op.into(), expected: expected.to_vec(), got: got.to_vec(), why: None }
    }

    /// [`Error::Shape`] with where `expected` comes from.
    ///
    /// ```
    /// let e = cliper::Error::shape_because("Pad", &[5, 6], &[4, 4], "the input [3, 4] padded by 1 on each side");
    /// assert_eq!(
    ///     e.to_string(),
    ///     "Pad: shape mismatch: expected [5, 6] (the input [3, 4] padded by 1 on each side), got [4, 4]"
    /// );
    /// ```
    pub fn shape_because(op: impl Into<String>, expected: &[usize], got: &[usize], why: impl Into<String>) -> Self {
        Error::Shape { op: op.into(), expected: expected.to_vec(), got: got.to_vec(), why: Some(why.into()) }
    }

    /// Shorthand for [`Error::ShapeRule`].
    ///
    /// ```
    /// let e = cliper::Error::shape_rule("MatrixPower", "a square matrix [..., n, n]", &[3, 4]);
    /// assert_eq!(e.to_string(), "MatrixPower: shape mismatch: expected a square matrix [..., n, n], got [3, 4]");
    /// ```
    pub fn shape_rule(op: impl Into<String>, rule: impl Into<String>, got: &[usize]) -> Self {
        Error::ShapeRule { op: op.into(), rule: rule.into(), got: got.to_vec() }
    }

    /// Shorthand for [`Error::Axis`].
    ///
    /// ```
    /// let e = cliper::Error::axis("sum", -3, &[4, 5]);
    /// assert_eq!(e.to_string(), "sum: axis -3 does not exist in an array of shape [4, 5] (2 axes)");
    /// ```
    pub fn axis(op: impl Into<String>, axis: isize, shape: &[usize]) -> Self {
        Error::Axis { op: op.into(), axis, shape: shape.to_vec() }
    }

    /// The same error with `op` (of the variants that name an operation) wrapped by `wrap`, as a chain names the
    /// step an operation ran in; other variants come back unchanged.
    ///
    /// ```
    /// let e = cliper::Error::shape("Transpose", &[3, 2], &[2, 3]).with_op(|op| format!("step 2 ({op})"));
    /// assert_eq!(e.to_string(), "step 2 (Transpose): shape mismatch: expected [3, 2], got [2, 3]");
    /// ```
    pub fn with_op(mut self, wrap: impl FnOnce(&str) -> String) -> Self {
        match &mut self {
            Error::InvalidArgument { op, .. }
            | Error::Shape { op, .. }
            | Error::ShapeRule { op, .. }
            | Error::Broadcast { op, .. }
            | Error::Length { op, .. }
            | Error::Axis { op, .. }
            | Error::Type { op, .. }
            | Error::TypeRule { op, .. } => *op = wrap(op),
            _ => {}
        }
        self
    }
}

/// ` (text)` for a note that is there, nothing for one that is not.
fn parenthesized(note: &Option<String>) -> String {
    note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
}

/// Shapes as `[2, 3] and [4]`, or `[2, 3], [4] and [5]`.
fn joined(shapes: &[Vec<usize>]) -> String {
    let listed: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
    match listed.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => listed.concat(),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant that carries a shape, a type or an axis: its one-line text names what was expected and what was
    /// given, and a clone says the same.
    #[test]
    fn typed_variants_name_both_sides_on_one_line() {
        let cases = [
            (Error::shape("Flip", &[3, 4], &[4, 3]), "Flip: shape mismatch: expected [3, 4], got [4, 3]"),
            (
                Error::shape_because("Flip", &[3, 4], &[4, 3], "the input's shape"),
                "Flip: shape mismatch: expected [3, 4] (the input's shape), got [4, 3]",
            ),
            (
                Error::shape_rule("MatrixPower", "a square matrix", &[3, 4]),
                "MatrixPower: shape mismatch: expected a square matrix, got [3, 4]",
            ),
            (
                Error::Broadcast { op: "Elementwise".into(), shapes: vec![vec![5, 3], vec![4]] },
                "Elementwise: shape mismatch: expected input shapes that broadcast together (numpy's rules), got \
                 [5, 3] and [4]",
            ),
            (
                Error::Broadcast { op: "Elementwise".into(), shapes: vec![vec![2], vec![3], vec![4]] },
                "Elementwise: shape mismatch: expected input shapes that broadcast together (numpy's rules), got \
                 [2], [3] and [4]",
            ),
            (
                Error::Length { op: "XData::write".into(), shape: vec![3, 4], got: 10 },
                "XData::write: shape mismatch: expected 12 elements for shape [3, 4], got 10 elements",
            ),
            (Error::axis("sum", 2, &[4, 5]), "sum: axis 2 does not exist in an array of shape [4, 5] (2 axes)"),
            (
                Error::Type { op: "dot".into(), expected: "f32", got: "c64", note: None },
                "dot: type mismatch: expected f32, got c64",
            ),
            (
                Error::Type {
                    op: "loading x.npy".into(),
                    expected: "f32",
                    got: "c64",
                    note: Some("load it as c32 or c64".into()),
                },
                "loading x.npy: type mismatch: expected f32, got c64 (load it as c32 or c64)",
            ),
            (
                Error::TypeRule { op: "map-coordinates".into(), rule: "real coordinates".into(), got: "c32" },
                "map-coordinates: type mismatch: expected real coordinates, got c32",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
            assert_eq!(error.clone().to_string(), text);
            assert_eq!(text.lines().count(), 1, "{text}");
        }
    }

    #[test]
    fn with_op_wraps_the_operation_of_typed_variants_only() {
        let step = |op: &str| format!("step 1 ({op})");
        let e = Error::axis("sum", 3, &[2]).with_op(step);
        assert!(matches!(&e, Error::Axis { op, axis: 3, shape } if op == "step 1 (sum)" && shape == &[2]), "{e:?}");
        let e = Error::Type { op: "dot".into(), expected: "f32", got: "f64", note: None }.with_op(step);
        assert!(matches!(&e, Error::Type { op, expected: "f32", got: "f64", .. } if op == "step 1 (dot)"), "{e:?}");
        let e = Error::NoDevice { reason: "none".into() }.with_op(step);
        assert_eq!(e.to_string(), "no OpenCL device: none");
    }
}
