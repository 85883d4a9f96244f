//! Bad input gives a typed error that names what was wrong, never a panic.

mod common;
use cliper::prelude::*;
use common::*;

#[test]
fn wrong_output_shape_names_both_shapes() {
    let x = XData::<f32>::zeros(app(), &[2, 3]).unwrap();
    let y = XData::<f32>::zeros(app(), &[3, 3]).unwrap();
    let err = Transpose::new(&x, &y).init().unwrap_err();
    assert!(matches!(err, Error::Shape { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("Transpose") && msg.contains("[3, 2]") && msg.contains("[3, 3]"), "{msg}");

    let z = XData::<f32>::zeros(app(), &[4, 5, 6]).unwrap();
    let w = XData::<f32>::zeros(app(), &[6, 5, 4]).unwrap();
    let msg = Permute::new(&z, &w, &[2, 0, 1]).init().unwrap_err().to_string();
    assert!(msg.contains("[6, 4, 5]") && msg.contains("[6, 5, 4]"), "{msg}");
    let msg = Permute::new(&z, &w, &[2, 2, 1]).init().unwrap_err().to_string();
    assert!(msg.contains("not a permutation") && msg.contains("[4, 5, 6]"), "{msg}");
    let msg = Transpose::apply(&XData::<f32>::zeros(app(), &[7]).unwrap()).unwrap_err().to_string();
    assert!(msg.contains("at least 2 axes") && msg.contains("[7]"), "{msg}");
}

#[test]
fn bad_device_selection_is_reported_with_the_choices() {
    let err = ClApp::builder().select("no-such-device-anywhere").build().unwrap_err();
    assert!(matches!(err, Error::DeviceSelection { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("no-such-device-anywhere") && msg.contains("available devices"), "{msg}");
    assert!(msg.contains(&app().device().name), "the list should name the existing device: {msg}");
}

#[test]
fn a_kernel_that_does_not_compile_returns_the_compiler_log() {
    let src = "kernel void broken(global float* x) { x[0] = undefined_symbol + 1; }";
    let err = app().build_program("broken.cl", src, "").unwrap_err();
    let Error::Build { program, log } = &err else { panic!("expected a build error, got {err:?}") };
    assert!(program.contains("broken.cl"), "{program}");
    assert!(log.contains("undefined_symbol"), "the log should point at the mistake: {log}");
    // A bad build option is a build error too, not a panic.
    assert!(app().build_program("ok", "kernel void k() {}", "-Dfoo=\0").is_err());
    assert!(app().build_program("ok", "kernel void k() {}", "").unwrap().kernel("missing").is_err());
}

#[test]
fn reading_an_array_whose_producer_failed_reports_the_failure() {
    let src = "kernel void fill(global float* x) { x[get_global_id(0)] = 1.0f; }";
    let mut kernel = app().build_program("fill", src, "").unwrap().kernel("fill").unwrap().owned_by("Filler");
    let too_big = app().device().max_work_group_size * 2;
    let x = XData::<f32>::zeros(app(), &[too_big]).unwrap();
    // A work-group larger than the device allows: the enqueue fails.
    let err = kernel.launch().output("x", &x).global(&[too_big]).local(&[too_big]).enqueue().unwrap_err();
    assert!(err.to_string().contains("CL_INVALID_WORK_GROUP_SIZE"), "{err}");

    let read = x.to_vec().unwrap_err();
    let Error::ProducerFailed { producer, cause } = &read else { panic!("expected ProducerFailed, got {read:?}") };
    assert!(producer.contains("Filler"), "{producer}");
    assert!(cause.to_string().contains("CL_INVALID_WORK_GROUP_SIZE"), "{cause}");

    // A process that reads the invalid array refuses to run and passes the failure on to its own output.
    let y = XData::<f32>::zeros(app(), &[1, too_big]).unwrap();
    let mut t = Transpose::new(&x.reshape(&[too_big, 1]).unwrap(), &y);
    t.init().unwrap();
    assert!(matches!(t.launch().unwrap_err(), Error::ProducerFailed { .. }));
    let downstream = y.to_vec().unwrap_err().to_string();
    assert!(downstream.contains("Transpose") && downstream.contains("CL_INVALID_WORK_GROUP_SIZE"), "{downstream}");

    // A successful write makes the array valid again.
    kernel.launch().output("x", &x).global(&[too_big]).enqueue().unwrap();
    assert!(x.to_vec().unwrap().iter().all(|&v| v == 1.0));
}

#[test]
fn overlapping_input_and_output_are_refused() {
    let x = XData::<f32>::zeros(app(), &[8, 8]).unwrap();
    let msg = Transpose::new(&x, &x.t()).init().unwrap_err().to_string();
    assert!(msg.contains("overlap"), "{msg}");
    // Disjoint halves of one buffer are fine.
    let top = x.slice_axis(0, 0..4).unwrap();
    let bottom = x.slice_axis(0, 4..8).unwrap().slice_axis(1, 0..4).unwrap();
    let mut t = Transpose::new(&top.slice_axis(1, 4..8).unwrap(), &bottom);
    t.init().unwrap();
    t.launch().unwrap();
}

#[test]
fn arrays_of_different_devices_do_not_mix() {
    let other = ClApp::builder().use_env(true).build().unwrap();
    let x = XData::<f32>::zeros(app(), &[2, 3]).unwrap();
    let y = XData::<f32>::zeros(&other, &[3, 2]).unwrap();
    let msg = Transpose::new(&x, &y).init().unwrap_err().to_string();
    assert!(msg.contains("different ClApps"), "{msg}");
}

#[test]
fn host_data_of_the_wrong_length_is_refused() {
    let msg = XData::from_slice(app(), &[2, 3], &[0.0f32; 5]).unwrap_err().to_string();
    assert!(msg.contains("6 elements") && msg.contains("5 elements") && msg.contains("[2, 3]"), "{msg}");
    let x = XData::<f32>::zeros(app(), &[2, 3]).unwrap();
    assert!(x.write(&[1.0; 7]).unwrap_err().to_string().contains("7 elements"));
    let msg = x.t().reshape(&[6]).unwrap_err().to_string();
    assert!(msg.contains("contiguous"), "{msg}");
    assert!(x.reshape(&[4, 2]).unwrap_err().to_string().contains("[4, 2]"));
    assert!(x.slice_axis(1, 2..9).is_err() && x.index_axis(2, 0).is_err() && x.index_axis(0, 2).is_err());
}

#[test]
fn absurd_allocations_are_refused_before_reaching_the_driver() {
    let err = XData::<f64>::zeros(app(), &[1 << 40, 1 << 10]).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    assert!(XData::<f64>::zeros(app(), &[usize::MAX, 3]).is_err());
}

/// Code decides on an error by its typed fields — the shapes, the axis, the element types — never by its text
/// (issue 46): each refusal below is matched on exact field values, and its one-line message still names both
/// sides.
#[test]
fn refusals_carry_typed_shapes_axes_and_types() {
    let x = XData::<f32>::zeros(app(), &[2, 3]).unwrap();
    let err = Transpose::new(&x, &XData::<f32>::zeros(app(), &[3, 3]).unwrap()).init().unwrap_err();
    assert!(
        matches!(&err, Error::Shape { op, expected, got, .. } if op == "Transpose" && expected == &[3, 2] && got == &[3, 3]),
        "{err:?}"
    );

    let err = MatrixPower::<f32>::output_shape(&[5, 3, 4]).unwrap_err();
    assert!(
        matches!(&err, Error::Shape { expected, got, .. } if expected == &[5, 3, 3] && got == &[5, 3, 4]),
        "{err:?}"
    );
    assert_eq!(err.to_string().lines().count(), 1, "{err}");

    let err = NormN::apply(&XData::<f32>::zeros(app(), &[4, 5]).unwrap(), NormParams::new(NormOrder::Inf).along(2))
        .unwrap_err();
    assert!(matches!(&err, Error::Axis { axis: 2, shape, .. } if shape == &[4, 5]), "{err:?}");
    assert!(err.to_string().ends_with("axis 2 does not exist in an array of shape [4, 5] (2 axes)"), "{err}");

    let err = XData::from_slice(app(), &[2, 3], &[0.0f32; 5]).unwrap_err();
    assert!(matches!(&err, Error::Length { shape, got: 5, .. } if shape == &[2, 3]), "{err:?}");

    let err = Elementwise::<f32>::output_shape(&[&[5, 3], &[4]]).unwrap_err();
    assert!(matches!(&err, Error::Broadcast { shapes, .. } if shapes == &[vec![5, 3], vec![4]]), "{err:?}");
    assert!(err.to_string().ends_with("got [5, 3] and [4]"), "{err}");

    // numpy wrote the complex64 file (tests/fixtures/c64.npy; cliper calls the type c32): loading it as f32 names
    // both element types.
    let complex = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/c64.npy");
    let err = XData::<f32>::load(app(), &complex).unwrap_err();
    assert!(matches!(&err, Error::Type { expected: "f32", got: "c32", .. }), "{err:?}");
    assert!(err.to_string().contains("c64.npy") && err.to_string().contains("load it as c32 or c64"), "{err}");
}
