//! Device discovery and selection on whatever the machine has (PoCL in CI).

mod common;
use cliper::prelude::*;

#[test]
fn devices_are_listed_and_exactly_one_is_preferred() {
    let devices = ClApp::devices().unwrap();
    assert!(!devices.is_empty());
    let preferred: Vec<_> = devices.iter().filter(|d| d.preferred).collect();
    assert_eq!(preferred.len(), 1);
    for d in &devices {
        assert!(!d.name.is_empty() && d.compute_units > 0 && d.max_work_group_size > 0, "{d:?}");
        assert!(d.global_mem_bytes > 0 && d.local_mem_bytes > 0 && d.opencl_version >= (1, 2), "{d:?}");
    }
    // new() opens the preferred device
    let app = ClApp::new().unwrap();
    assert_eq!(app.device().id(), preferred[0].id());
    // GPUs always come before CPUs
    if devices.iter().any(|d| d.kind == DeviceKind::Gpu) {
        assert_eq!(app.device().kind, DeviceKind::Gpu);
    }
}

#[test]
fn builder_filters_select_and_reject() {
    let devices = ClApp::devices().unwrap();
    let first = &devices[0];
    let app = ClApp::builder().select(&first.id()).build().unwrap();
    assert_eq!(app.device().id(), first.id());
    let by_name = ClApp::builder().name(&first.name[..first.name.len().min(6)]).build().unwrap();
    assert!(by_name.device().name.contains(&first.name[..first.name.len().min(6)]));
    assert!(ClApp::builder().device_type(first.kind).min_opencl_version(1, 2).build().is_ok());
    assert!(ClApp::builder().min_opencl_version(99, 0).build().is_err());
    let has_gpu = devices.iter().any(|d| d.kind == DeviceKind::Gpu);
    assert_eq!(ClApp::builder().device_type(DeviceKind::Gpu).build().is_ok(), has_gpu);
}
