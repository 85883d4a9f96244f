//! A [`cliper::Error`] as the Python exception numpy or scipy raises for the same mistake, keeping the library's
//! one-line message: a bad shape, axis or value is a `ValueError`, a type that cannot be computed a `TypeError`,
//! memory a `MemoryError`, a file an `OSError` (`FileNotFoundError` for a missing one), the device a `RuntimeError`.

use cliper::Error;
use pyo3::PyErr;
use pyo3::exceptions::{
    PyFileNotFoundError, PyMemoryError, PyOSError, PyPermissionError, PyRuntimeError, PyTypeError, PyValueError,
};
use std::io::ErrorKind;

/// The exception for `error`.
pub fn to_py(error: Error) -> PyErr {
    let message = error.to_string();
    match error {
        Error::Type { .. } | Error::TypeRule { .. } => PyTypeError::new_err(message),
        Error::OutOfMemory { .. } | Error::HostMemory { .. } => PyMemoryError::new_err(message),
        // Python's own subclasses, so that `except FileNotFoundError` works as with open().
        Error::Io { ref source, .. } if source.kind() == ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
        Error::Io { ref source, .. } if source.kind() == ErrorKind::PermissionDenied => {
            PyPermissionError::new_err(message)
        }
        Error::Io { .. } => PyOSError::new_err(message),
        Error::Cl { .. }
        | Error::Build { .. }
        | Error::NoDevice { .. }
        | Error::DeviceSelection { .. }
        | Error::NotInitialized { .. }
        | Error::ProducerFailed { .. }
        | Error::Unsupported { .. } => PyRuntimeError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// `Result<T, cliper::Error>` as a `PyResult<T>`.
pub trait IntoPy<T> {
    /// The value, or the Python exception for the error.
    fn py(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPy<T> for cliper::Result<T> {
    fn py(self) -> pyo3::PyResult<T> {
        self.map_err(to_py)
    }
}
