//! The devices Python sees: each opened once (a `ClApp` per device id, kept for the life of the process, so that
//! its compiled programs are reused by every call) and named by its id, `PLATFORM:DEVICE`.

use crate::errors::IntoPy;
use cliper::ClApp;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The devices opened so far, by id: one `ClApp` per device, whether it was named or is the default, so that
/// arrays made either way can meet in one operation.
static OPENED: OnceLock<Mutex<HashMap<String, ClApp>>> = OnceLock::new();

/// The id of the default device, once opened.
static DEFAULT_ID: OnceLock<String> = OnceLock::new();

/// The device `id` names (`None`: the default), opened on first use.
pub fn app(py: Python<'_>, id: Option<&str>) -> PyResult<ClApp> {
    let opened = OPENED.get_or_init(Mutex::default);
    let known = id.or(DEFAULT_ID.get().map(String::as_str));
    if let Some(app) = known.and_then(|id| opened.lock().ok()?.get(id).cloned()) {
        return Ok(app);
    }
    // Opening a device can take a while (the driver's start): without the GIL, and outside the lock.
    let app = py
        .detach(|| match id {
            None => ClApp::new(),
            Some(id) => ClApp::builder().select(id).build(),
        })
        .py()?;
    let id = app.device().id();
    if known.is_none() {
        let _ = DEFAULT_ID.set(id.clone());
    }
    let mut apps =
        opened.lock().map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the device table is poisoned"))?;
    Ok(apps.entry(id).or_insert(app).clone())
}

/// Every OpenCL device of every platform, as dicts: `id` (`"0:1"`, what `cliper.Device` takes), `name`,
/// `platform`, `kind` (`GPU`, `CPU`, …), `memory` (bytes), `compute_units`, `double` (whether it computes in
/// float64) and `default` (the one used when no device is named).
#[pyfunction]
pub fn devices(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let infos = py.detach(ClApp::devices).py()?;
    infos
        .into_iter()
        .map(|info| {
            let d = PyDict::new(py);
            d.set_item("id", info.id())?;
            d.set_item("name", &info.name)?;
            d.set_item("platform", &info.platform_name)?;
            d.set_item("kind", info.kind.to_string())?;
            d.set_item("memory", info.global_mem_bytes)?;
            d.set_item("compute_units", info.compute_units)?;
            d.set_item("double", info.fp64)?;
            d.set_item("default", info.preferred)?;
            Ok(d)
        })
        .collect()
}

/// The id of the device used when none is named (`CLIPER_DEVICE` narrows the choice, as for the command line).
#[pyfunction]
pub fn default_device(py: Python<'_>) -> PyResult<String> {
    Ok(app(py, None)?.device().id())
}
