//! The native half of `cliper.io`: files to numpy arrays and back through the library's readers and writers
//! (docs/formats.md), in the library's own axis order. The Python half (python/cliper/io.py) turns that order into
//! nibabel's, numpy's, Pillow's and tifffile's, and checks names and arguments.
//!
//! Every read and write runs without the GIL; every failure is a [`cliper::Error`] turned into a Python exception
//! by errors.rs (a missing file a `FileNotFoundError`, a bad file or array a `ValueError`).

use crate::errors::IntoPy;
use cliper::{Dtype, Geometry, HostArray, Image};
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};
use numpy::{Element, PyArray, PyArrayDyn, PyArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::path::PathBuf;

/// A 4×4 affine, row-major.
type Affine = [[f64; 4]; 4];

/// A NIfTI file (`.nii`, `.nii.gz`) as `(array, colour, affine, rescaled)`: the array in cliper's order
/// (`[…, T, Z, Y, X]`, nibabel's reversed; colour `[…, Z, C, Y, X]`) with scl_slope/scl_inter applied, nibabel's
/// `img.affine` (`None` when the file's is degenerate: a zero pixdim without a transform), and whether a rescale
/// other than slope 1, intercept 0 was applied to integer samples.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn read_nifti(py: Python<'_>, path: PathBuf) -> PyResult<(Py<PyAny>, bool, Option<Affine>, bool)> {
    let (image, rescaled) = py
        .detach(|| -> cliper::Result<_> {
            let image = cliper::read_nifti(&path)?;
            // Image::scaling records rescales of integers up to 32 bits only; a whole-number rescale of 64-bit
            // integers stays in their type, and nibabel gives it as float64: the header tells whether there was one.
            let wide = matches!(image.array.dtype(), Dtype::I64 | Dtype::U64);
            let rescaled =
                image.scaling.is_some() || (wide && cliper::nifti_scale(&path)?.is_some_and(|pair| pair != (1.0, 0.0)));
            Ok((image, rescaled))
        })
        .py()?;
    let affine = image.geometry.map(|g| g.affine());
    Ok((to_numpy(py, image.array), image.colour, affine, rescaled))
}

/// Writes `array` (cliper's order, `[…, Z, Y, X]`; C-contiguous) as a grey NIfTI-1 with nibabel's `affine` as its
/// sform and qform (`None`: no transform, as `nib.Nifti1Image(data, None)`).
#[pyfunction]
pub fn write_nifti(py: Python<'_>, path: PathBuf, array: &Bound<'_, PyAny>, affine: Option<Affine>) -> PyResult<()> {
    let array = from_numpy(array)?;
    let geometry = affine.as_ref().map(Geometry::from_affine).transpose().py()?;
    py.detach(|| cliper::write_nifti(&path, &array, false, geometry.as_ref())).py()
}

/// A DICOM series (a folder, a file pattern or one file) as `(array, affine, rescaled)`: the array
/// `[slice, row, column]` sorted along the slice normal with RescaleSlope/Intercept applied, the 4×4 affine from
/// (slice, row, column) indices to LPS millimetres ([`lps_index_affine`] of the library's geometry, whose slice
/// axis is the step from the first to the last position, sheared for a gantry-tilted CT), and whether a rescale
/// other than slope 1, intercept 0 was applied.
#[pyfunction]
pub fn read_dicom_series(py: Python<'_>, path: PathBuf) -> PyResult<(Py<PyAny>, Affine, bool)> {
    let dicom = py.detach(|| cliper::read_dicom(&path)).py()?;
    let rescaled = dicom.info.rescale.iter().any(|&pair| pair != (1.0, 0.0));
    let Image { array, colour, geometry, .. } = dicom.image;
    if colour {
        return Err(PyValueError::new_err(format!(
            "{}: a colour ({} samples) DICOM image is not a grey series volume",
            path.display(),
            array.dtype().name()
        )));
    }
    let geometry = geometry.ok_or_else(|| {
        PyValueError::new_err(format!(
            "{}: no ImagePositionPatient/ImageOrientationPatient to place the slices",
            path.display()
        ))
    })?;
    Ok((to_numpy(py, array), lps_index_affine(&geometry), rescaled))
}

/// The affine from array indices (slice, row, column) — in that order, not nibabel's (i, j, k) — to DICOM's LPS
/// patient coordinates: column `a` is the step of axis `a` (its direction times its spacing), the last column the
/// position of voxel [0, 0, 0]; the geometry's RAS x and y are negated back into LPS.
fn lps_index_affine(geometry: &Geometry) -> Affine {
    let to_lps = |[x, y, z]: [f64; 3]| [-x, -y, z];
    let step = |direction: [f64; 3], spacing: f64| to_lps(direction.map(|d| d * spacing));
    let ([d0, d1, d2], [s0, s1, s2]) = (geometry.direction, geometry.spacing);
    let ([a0, a1, a2], [b0, b1, b2], [c0, c1, c2]) = (step(d0, s0), step(d1, s1), step(d2, s2));
    let [o0, o1, o2] = to_lps(geometry.origin);
    [[a0, b0, c0, o0], [a1, b1, c1, o1], [a2, b2, c2, o2], [0.0, 0.0, 0.0, 1.0]]
}

/// The array in a PNG, TIFF, NPY, CFL or MAT (one variable) file, by extension, in cliper's order (colour
/// channels at axis −3), with whether it is a colour image.
#[pyfunction]
pub fn read_array(py: Python<'_>, path: PathBuf) -> PyResult<(Py<PyAny>, bool)> {
    let image = py.detach(|| cliper::read_image(&path)).py()?;
    Ok((to_numpy(py, image.array), image.colour))
}

/// The variable `name` of a MAT file, in MATLAB's shape (as scipy.io.loadmat gives it).
#[pyfunction]
pub fn read_mat_variable(py: Python<'_>, path: PathBuf, name: &str) -> PyResult<Py<PyAny>> {
    let array = py.detach(|| cliper::read_mat_variable(&path, name)).py()?;
    Ok(to_numpy(py, array))
}

/// Writes `array` (C-contiguous, cliper's order: colour channels at axis −3 when `colour`) to a PNG, TIFF, NPY, CFL
/// or MAT (variable `x`) file by extension, atomically.
#[pyfunction]
pub fn write_array(py: Python<'_>, path: PathBuf, array: &Bound<'_, PyAny>, colour: bool) -> PyResult<()> {
    let image = Image { array: from_numpy(array)?, colour, geometry: None, scaling: None };
    py.detach(|| cliper::write_image(&path, &image)).py()
}

/// Adds `array` to a MAT file as the variable `name` (replacing one of that name; a new file when there is none).
#[pyfunction]
pub fn write_mat_variable(py: Python<'_>, path: PathBuf, name: &str, array: &Bound<'_, PyAny>) -> PyResult<()> {
    let array = from_numpy(array)?;
    py.detach(|| cliper::write_mat_variable(&path, name, &array)).py()
}

/// A host array as a numpy array of the same type and shape, without copying its elements.
fn to_numpy(py: Python<'_>, array: HostArray) -> Py<PyAny> {
    fn wrap<T: Element>(py: Python<'_>, a: ArrayD<T>) -> Py<PyAny> {
        PyArray::from_owned_array(py, a).into_any().unbind()
    }
    match array {
        HostArray::U8(a) => wrap(py, a),
        HostArray::U16(a) => wrap(py, a),
        HostArray::U32(a) => wrap(py, a),
        HostArray::U64(a) => wrap(py, a),
        HostArray::I8(a) => wrap(py, a),
        HostArray::I16(a) => wrap(py, a),
        HostArray::I32(a) => wrap(py, a),
        HostArray::I64(a) => wrap(py, a),
        HostArray::F32(a) => wrap(py, a),
        HostArray::F64(a) => wrap(py, a),
        HostArray::C32(a) => wrap(py, a),
        HostArray::C64(a) => wrap(py, a),
    }
}

/// A numpy array of a type files hold (u8–u64, i8–i64, float32/64, complex64/128) as a host array, in row-major
/// order; any other type is a `ValueError` naming it (the Python half converts bool to uint8 first).
fn from_numpy(array: &Bound<'_, PyAny>) -> PyResult<HostArray> {
    fn copy<T: Element + Clone>(array: &Bound<'_, PyAny>) -> Option<ArrayD<T>> {
        let array = array.cast::<PyArrayDyn<T>>().ok()?.readonly();
        Some(array.as_array().as_standard_layout().into_owned())
    }
    macro_rules! first_of {
        ($($variant:ident: $t:ty),*) => {
            $(if let Some(a) = copy::<$t>(array) { return Ok(HostArray::$variant(a)); })*
        };
    }
    first_of!(U8: u8, U16: u16, U32: u32, U64: u64, I8: i8, I16: i16, I32: i32, I64: i64, F32: f32, F64: f64,
        C32: Complex32, C64: Complex64);
    let dtype = array.getattr("dtype").map(|d| d.to_string()).unwrap_or_else(|_| "not an array".into());
    Err(PyValueError::new_err(format!(
        "files hold uint8–uint64, int8–int64, float32, float64, complex64 or complex128 arrays, not {dtype}"
    )))
}
