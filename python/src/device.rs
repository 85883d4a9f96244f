//! The devices Python sees: each opened once (a `ClApp` per device id, kept for the life of the process, so that
//! its compiled programs are reused by every call) and named by its id, `PLATFORM:DEVICE`.

use crate::errors::IntoPy;
use cliper::ClApp;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The devices opened so far, by id; `None` is the default device ([`ClApp::new`], which reads `CLIPER_DEVICE`).
static OPENED: OnceLock<Mutex<HashMap<Option<String>, ClApp>>> = OnceLock::new();

/// The device `id` names (`None`: the default), opened on first use.
pub fn app(py: Python<'_>, id: Option<&str>) -> PyResult<ClApp> {
    let opened = OPENED.get_or_init(Mutex::default);
    let key = id.map(str::to_string);
    if let Some(app) = opened.lock().ok().and_then(|apps| apps.get(&key).cloned()) {
        return Ok(app);
    }
    // Opening a device can take a while (the driver's start): without the GIL, and outside the lock.
    let app = py
        .detach(|| match id {
            None => ClApp::new(),
            Some(id) => ClApp::builder().select(id).build(),
        })
        .py()?;
    if let Ok(mut apps) = opened.lock() {
        apps.entry(key).or_insert_with(|| app.clone());
    }
    Ok(app)
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
