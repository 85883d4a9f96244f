//! Chains of processes: no host transfers between the upload and the final read, profiling reports, and the
//! init/launch contract.

mod common;
use cliper::prelude::*;
use common::*;
use num_complex::Complex32;

#[test]
fn three_process_chain_makes_no_transfer_between_upload_and_final_read() {
    let mut rng = Rng::new(10);
    // A private ClApp: the shared one may be counting transfers of tests running beside this one.
    let app = cliper::ClApp::builder().use_env(true).build().unwrap();
    let shape = [3usize, 65, 33];
    let data: Vec<Complex32> = rng.vec(shape.iter().product());
    let host =
        ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), data.iter().map(|v| v.to_c64()).collect::<Vec<_>>())
            .unwrap();

    let x = XData::from_slice(&app, &shape, &data).unwrap();
    let a = XData::zeros(&app, &[3, 33, 65]).unwrap();
    let b = XData::zeros(&app, &[33, 3, 65]).unwrap();
    let c = XData::zeros(&app, &[33, 65, 3]).unwrap();
    let mut chain = Pipeline::new(&app)
        .then(Transpose::new(&x, &a))
        .then(Permute::new(&a, &b, &[1, 0, 2]))
        .then(ConjugateTranspose::new(&b, &c));
    assert_eq!(chain.names(), vec!["Transpose", "Permute", "ConjugateTranspose"]);

    let after_upload = app.transfer_stats();
    chain.init().unwrap();
    chain.run().unwrap();
    chain.run().unwrap(); // launching again is fine and still transfers nothing
    let during = app.transfer_stats() - after_upload;
    assert_eq!(during.total_calls(), 0, "the chain copied between host and device: {during:?}");

    let got = c.to_ndarray().unwrap().mapv(|v| v.to_c64());
    let read = app.transfer_stats() - after_upload;
    assert_eq!((read.device_to_host_calls, read.host_to_device_calls), (1, 0));
    assert_eq!(read.device_to_host_bytes, (3 * 65 * 33 * 8) as u64);

    // x[b, r, c] → a[b, c, r] → b[c, b, r] → conj c[c, r, b]
    let want = host.permuted_axes(ndarray::IxDyn(&[2, 1, 0])).mapv(|v| v.conj()).as_standard_layout().to_owned();
    assert_same(&got, &want, "chain result");
}

#[test]
fn profile_reports_every_kernel_with_time_and_bandwidth() {
    let volume = XData::<f32>::zeros(app(), &[5, 40, 70]).unwrap();
    let t = XData::zeros(app(), &[5, 70, 40]).unwrap();
    let mut chain = Pipeline::new(app()).then(SheppLogan::new(&volume)).then(Transpose::new(&volume, &t));
    let report = chain.profile().unwrap();
    assert_eq!(report.launches.len(), 2);
    assert_eq!(report.launches[0].process, "SheppLogan");
    // The transpose kernel the planner picks: copy_blocks on CPUs, copy_tiled on GPUs.
    let kernel = if app().device().kind == cliper::DeviceKind::Cpu { "copy_blocks" } else { "copy_tiled" };
    assert_eq!((report.launches[1].process.as_str(), report.launches[1].kernel.as_str()), ("Transpose", kernel));
    for l in &report.launches {
        assert!(l.device_ms > 0.0, "{l:?}");
        assert!(l.gb_per_s().is_some_and(|g| g > 0.0), "{l:?}");
    }
    assert_eq!(report.launches[1].bytes, Some(2 * 5 * 40 * 70 * 4));
    let table = report.to_string();
    assert!(table.contains(kernel) && table.contains("total"), "{table}");
    // The phantom's transpose, checked against the host reference.
    let want = SheppLogan::<f32>::reference(&[5, 40, 70]).unwrap();
    let got = t.to_vec().unwrap();
    let mismatches = (0..5 * 40 * 70)
        .filter(|&n| {
            let (k, j, i) = (n / 2800, (n / 40) % 70, n % 40);
            (f64::from(got[n]) - want[(k * 40 + i) * 70 + j]).abs() > 1e-5
        })
        .count();
    // float32 may decide an edge pixel differently from float64; there are a handful at most.
    assert!(mismatches <= 14, "{mismatches} phantom pixels differ from the reference");
}

#[test]
fn profiling_needs_a_profiling_queue() {
    let plain = cliper::ClApp::builder().use_env(true).build().unwrap();
    let x = XData::<f32>::zeros(&plain, &[2, 2]).unwrap();
    let y = XData::<f32>::zeros(&plain, &[2, 2]).unwrap();
    let err = Pipeline::new(&plain).then(Transpose::new(&x, &y)).profile().unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert!(err.to_string().contains("profiling(true)"));
}

#[test]
fn launch_before_init_is_an_error_not_a_crash() {
    let x = XData::<f32>::zeros(app(), &[2, 3]).unwrap();
    let y = XData::<f32>::zeros(app(), &[3, 2]).unwrap();
    let err = Transpose::new(&x, &y).launch().unwrap_err();
    assert!(matches!(err, Error::NotInitialized { .. }), "{err}");
    assert!(Permute::new(&x, &y, &[1, 0]).launch().is_err());
    assert!(SheppLogan::new(&x).launch().is_err());
}

#[test]
fn phantom_matches_reference_in_double_precision_and_on_views() {
    // In float64 the device and the host evaluate the same expressions: every pixel must agree.
    let image = XData::<f64>::zeros(app(), &[129, 257]).unwrap();
    let mut p = SheppLogan::new(&image.t().t());
    p.init().unwrap();
    p.launch().unwrap();
    let want = SheppLogan::<f64>::reference(&[129, 257]).unwrap();
    let got = image.to_vec().unwrap();
    let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
    assert!(worst <= 1e-12, "largest difference {worst}");
    // Writing through a transposed view fills the transpose.
    let t = XData::<f64>::zeros(app(), &[257, 129]).unwrap();
    let mut p = SheppLogan::new(&t.t());
    p.init().unwrap();
    p.launch().unwrap();
    assert_eq!(Transpose::apply(&t).unwrap().to_vec().unwrap(), got);
}
