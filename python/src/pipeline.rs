//! Pipeline files from Python: `cliper.run_pipeline("steps.toml")` runs one as `cliper run` does for a single
//! run (its inputs read, its steps on the device without copies between them, its outputs written), after the
//! same check that no output overwrites an input or another output.

use crate::device::app;
use crate::errors::IntoPy;
use cliper::chain::Chain;
use num_complex::Complex64;
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Runs the pipeline file `path` once on `device` (`None`: the default) and returns a dict: `written`, a list of
/// `(name, path, shape, dtype)` for each output file, and `values`, the small results nobody saved (norms, dot
/// products), each a numpy array. A directory or glob input (a batch) is `cliper run`'s job.
#[pyfunction]
#[pyo3(signature = (path, device=None))]
pub fn run_pipeline<'py>(py: Python<'py>, path: &str, device: Option<&str>) -> PyResult<Bound<'py, PyDict>> {
    let app = app(py, device)?;
    let record = py
        .detach(|| -> cliper::Result<_> {
            let chain = Chain::from_file(path.as_ref())?;
            chain.run_files(None)?.check()?;
            let outcome = chain.run(&app, None, false, |_| {})?;
            let mut records = outcome.records;
            match records.pop() {
                Some(cliper::chain::RunRecord { error: Some(error), .. }) => Err(error),
                Some(record) => Ok(record),
                None => Err(cliper::Error::invalid("pipeline", "ran no file")),
            }
        })
        .py()?;
    let result = PyDict::new(py);
    let written: Vec<_> = record
        .written
        .iter()
        .map(|(name, file, shape, dtype)| (name.clone(), file.to_string_lossy().into_owned(), shape.clone(), *dtype))
        .collect();
    result.set_item("written", written)?;
    let values = PyDict::new(py);
    for (name, shape, elements, kind) in &record.values {
        let complex = matches!(kind, cliper::chain::ElementKind::C32 | cliper::chain::ElementKind::C64);
        let array = if complex {
            PyArray1::from_slice(py, elements).reshape(shape.as_slice())?.into_any()
        } else {
            let reals: Vec<f64> = elements.iter().map(|v: &Complex64| v.re).collect();
            PyArray1::from_vec(py, reals).reshape(shape.as_slice())?.into_any()
        };
        values.set_item(name, array)?;
    }
    result.set_item("values", values)?;
    Ok(result)
}
