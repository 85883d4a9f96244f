//! Runs an operation of [`cliper::chain::DEFINITIONS`] by name: its parameters are a pipeline step's keys (a
//! dict here, a TOML table there), read by the same definition the command line and pipeline files read.

use crate::array::Handle;
use crate::errors::IntoPy;
use cliper::chain::{AnyData, DEFINITIONS, Definition};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Runs the operation `name` on `inputs` with `params` (the step's keys; a value of `None` leaves the key to its
/// default) and returns the result on the same device. The work is queued, not waited for.
#[pyfunction]
pub fn apply(
    py: Python<'_>,
    name: &str,
    inputs: Vec<PyRef<'_, Handle>>,
    params: &Bound<'_, PyDict>,
) -> PyResult<Handle> {
    let definition =
        Definition::find(name).ok_or_else(|| PyValueError::new_err(format!("no operation named `{name}`")))?;
    let mut table = toml::Table::new();
    for (key, value) in params.iter() {
        if !value.is_none() {
            table.insert(key.extract::<String>()?, to_toml(&value)?);
        }
    }
    let op = (definition.from_table)(table).map_err(|reason| PyValueError::new_err(format!("{name}: {reason}")))?;
    let arrays: Vec<AnyData> = inputs.iter().map(|h| h.data.clone()).collect();
    let data = py
        .detach(|| {
            let refs: Vec<&AnyData> = arrays.iter().collect();
            op.apply(&refs)
        })
        .py()?;
    Ok(Handle { data })
}

/// Every definition as `(name, aliases, lowers_to, keys, input names)`: what the Python half checks its calls
/// against (python/tests/test_definitions.py).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn definitions() -> Vec<(&'static str, Vec<&'static str>, Option<&'static str>, Vec<String>, Vec<&'static str>)> {
    DEFINITIONS
        .iter()
        .map(|d| {
            let inputs = d.inputs.names.iter().map(|(name, _)| *name).collect();
            (d.name, d.aliases.to_vec(), d.lowers_to, d.keys(), inputs)
        })
        .collect()
}

/// A Python value as a step key's value: a bool, an integer or a real number (Python's or numpy's scalars), a
/// str, or a list or tuple of them.
fn to_toml(value: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    // Python's own floats and ints first, by their exact type: an index of 10⁵ labels is a list of them, and the
    // general rules below (numpy's bool by its type name, an integer tried before a float) cost about a
    // microsecond each, most of it the TypeError a float raises when asked for an integer.
    if value.is_exact_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(value.extract()?));
    }
    if value.is_exact_instance_of::<PyInt>()
        && let Ok(integer) = value.extract::<i64>()
    {
        return Ok(toml::Value::Integer(integer));
    }
    if value.is_instance_of::<PyBool>() || is_numpy_bool(value) {
        Ok(toml::Value::Boolean(value.is_truthy()?))
    } else if value.is_instance_of::<PyString>() {
        Ok(toml::Value::String(value.extract()?))
    } else if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        value.try_iter()?.map(|item| to_toml(&item?)).collect::<PyResult<Vec<_>>>().map(toml::Value::Array)
    } else if let Ok(integer) = value.extract::<i64>() {
        // Anything with __index__: int, numpy's integers.
        Ok(toml::Value::Integer(integer))
    } else if let Ok(real) = value.extract::<f64>() {
        // Anything with __float__: float, numpy's floats.
        Ok(toml::Value::Float(real))
    } else {
        Err(PyTypeError::new_err(format!("a parameter cannot be a {}", value.get_type().name()?)))
    }
}

/// Whether `value` is numpy's bool scalar (which is not a subclass of Python's bool).
fn is_numpy_bool(value: &Bound<'_, PyAny>) -> bool {
    value.get_type().name().is_ok_and(|name| name == "bool" || name == "bool_")
        && value.hasattr("dtype").unwrap_or(false)
}
