//! `cliper._cliper`, the native half of the Python package: device arrays (numpy in, numpy out), the devices, and
//! one entry point that runs any operation of [`cliper::chain::DEFINITIONS`] by name. The Python half
//! (python/cliper/) gives these scipy's, numpy's and BART's signatures.
//!
//! Nothing here panics into Python: every failure is a [`cliper::Error`] turned into the exception numpy or scipy
//! would raise for it (errors.rs), with the library's one-line message.

mod apply;
mod array;
mod device;
mod errors;
mod io;
mod pipeline;

use pyo3::prelude::*;

/// The module Python imports as `cliper._cliper`.
#[pymodule]
fn _cliper(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<array::Handle>()?;
    m.add_function(wrap_pyfunction!(array::upload, m)?)?;
    m.add_function(wrap_pyfunction!(device::devices, m)?)?;
    m.add_function(wrap_pyfunction!(device::default_device, m)?)?;
    m.add_function(wrap_pyfunction!(apply::apply, m)?)?;
    m.add_function(wrap_pyfunction!(apply::definitions, m)?)?;
    m.add_function(wrap_pyfunction!(pipeline::run_pipeline, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_nifti, m)?)?;
    m.add_function(wrap_pyfunction!(io::write_nifti, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_dicom_series, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_array, m)?)?;
    m.add_function(wrap_pyfunction!(io::read_mat_variable, m)?)?;
    m.add_function(wrap_pyfunction!(io::write_array, m)?)?;
    m.add_function(wrap_pyfunction!(io::write_mat_variable, m)?)?;
    Ok(())
}
