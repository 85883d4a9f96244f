//! Device arrays: a numpy array's elements on a device ([`Handle`], which `cliper.ndarray` wraps) and back.
//!
//! The four element types a device computes in travel as they are, straight from and into numpy's buffers (one
//! copy each way, without the GIL); the Python half converts every other numpy type first, as scipy does
//! (python/cliper/_array.py).

use crate::device::app;
use crate::errors::IntoPy;
use cliper::XData;
use cliper::chain::AnyData;
use num_complex::{Complex32, Complex64};
use numpy::{Element, PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// An array on a device: its elements (`f32`, `f64`, `c64` or `c128`), shape and device. Immutable: every
/// operation makes a new one.
#[pyclass(module = "cliper._cliper", frozen)]
pub struct Handle {
    pub data: AnyData,
}

/// `array`'s elements on the device `device` names (`None`: the default): a C-contiguous numpy array of float32,
/// float64, complex64 or complex128 (the Python half converts any other first).
#[pyfunction]
#[pyo3(signature = (array, device=None))]
pub fn upload(py: Python<'_>, array: &Bound<'_, PyAny>, device: Option<&str>) -> PyResult<Handle> {
    let app = app(py, device)?;
    fn up<T: Element + cliper::Element>(
        py: Python<'_>,
        app: &cliper::ClApp,
        array: &Bound<'_, PyAny>,
    ) -> Option<PyResult<XData<T>>> {
        let array = array.cast::<PyArrayDyn<T>>().ok()?.readonly();
        let shape = array.shape().to_vec();
        Some(match array.as_slice() {
            Ok(elements) => py.detach(|| XData::from_slice(app, &shape, elements)).py(),
            Err(_) => Err(PyTypeError::new_err("upload: the array must be C-contiguous")),
        })
    }
    let data = if let Some(x) = up::<f32>(py, &app, array) {
        AnyData::F32(x?)
    } else if let Some(x) = up::<f64>(py, &app, array) {
        AnyData::F64(x?)
    } else if let Some(x) = up::<Complex32>(py, &app, array) {
        AnyData::C32(x?)
    } else if let Some(x) = up::<Complex64>(py, &app, array) {
        AnyData::C64(x?)
    } else {
        let dtype = array.getattr("dtype").map(|d| d.to_string()).unwrap_or_else(|_| "not an array".into());
        return Err(PyTypeError::new_err(format!(
            "upload: a device holds float32, float64, complex64 or complex128, not {dtype}"
        )));
    };
    Ok(Handle { data })
}

#[pymethods]
impl Handle {
    /// The shape.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.data.shape().to_vec()
    }

    /// numpy's name of the element type: `float32`, `float64`, `complex64` or `complex128`.
    #[getter]
    fn dtype(&self) -> &'static str {
        numpy_name(&self.data)
    }

    /// The id of the device holding it (`PLATFORM:DEVICE`).
    #[getter]
    fn device(&self) -> String {
        self.data.app().device().id()
    }

    /// A new numpy array with the elements (waits for the work that computes them).
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        fn down<'py, T: Element + cliper::Element>(py: Python<'py>, x: &XData<T>) -> PyResult<Bound<'py, PyAny>> {
            let out = PyArrayDyn::<T>::zeros(py, x.shape(), false);
            {
                let mut write = out.readwrite();
                let elements = write.as_slice_mut().map_err(|e| PyTypeError::new_err(e.to_string()))?;
                py.detach(|| x.read_into(elements)).py()?;
            }
            Ok(out.into_any())
        }
        match &self.data {
            AnyData::F32(x) => down(py, x),
            AnyData::F64(x) => down(py, x),
            AnyData::C32(x) => down(py, x),
            AnyData::C64(x) => down(py, x),
        }
    }

    /// Waits until the device has finished the work queued so far (for timing).
    fn synchronize(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.data.app().finish()).py()
    }
}

/// numpy's name of an array's element type.
fn numpy_name(data: &AnyData) -> &'static str {
    match data {
        AnyData::F32(_) => "float32",
        AnyData::F64(_) => "float64",
        AnyData::C32(_) => "complex64",
        AnyData::C64(_) => "complex128",
    }
}
