//! Kernel arguments checked by name (debug builds, so every `cargo test`): a launch that names its arguments in
//! another order than the kernel declares them, or sets too few, is refused before anything runs; the names come
//! back from the driver for programs compiled from source and for programs loaded from the on-disk cache; and the
//! launches of a real process are counted as checked, so the check cannot be silently off.

use cliper::{ClApp, Error, Fft, FftParams, IndexType, Process, ProgramCache, XData, checked_launches};
use num_complex::Complex32;

const AXPY: &str = "kernel void axpy(global const float* x, global float* y, float a, uint n) {
    uint i = get_global_id(0); if (i < n) y[i] += a * x[i]; }";

fn app() -> ClApp {
    ClApp::builder().use_env(true).build().unwrap()
}

/// The message of an `InvalidArgument`, or a panic naming what came instead.
fn invalid_reason(result: cliper::Result<()>) -> String {
    match result {
        Err(Error::InvalidArgument { reason, .. }) => reason,
        other => panic!("expected an InvalidArgument, got {other:?}"),
    }
}

#[test]
fn swapped_argument_names_are_refused_and_the_declared_order_runs() {
    let app = app();
    let x = XData::from_slice(&app, &[4], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let y = XData::from_slice(&app, &[4], &[10.0f32; 4]).unwrap();
    let mut k = app.build_program("axpy", AXPY, "").unwrap().kernel("axpy").unwrap();

    // x and y swapped: both are float buffers, so only the names can tell.
    let swapped = k.launch().in_out("y", &y).input("x", &x).scalar("a", 2.0f32).index("n", IndexType::U32, 4);
    let reason = invalid_reason(swapped.global(&[4]).enqueue());
    assert_eq!(reason, "kernel `axpy` argument 0 is given as `y` but the kernel declares `x`");
    assert!(!reason.contains('\n'), "one line: {reason}");

    // The two scalars swapped.
    let scalars = k.launch().input("x", &x).in_out("y", &y).index("n", IndexType::U32, 4).scalar("a", 2.0f32);
    let reason = invalid_reason(scalars.global(&[4]).enqueue());
    assert_eq!(reason, "kernel `axpy` argument 2 is given as `n` but the kernel declares `a`");

    // One argument short.
    let short = k.launch().input("x", &x).in_out("y", &y).scalar("a", 2.0f32);
    let reason = invalid_reason(short.global(&[4]).enqueue());
    assert_eq!(reason, "kernel `axpy` declares 4 arguments but the launch sets 3 (the next one is `n`)");

    // One too many.
    let long =
        k.launch().input("x", &x).in_out("y", &y).scalar("a", 2.0f32).index("n", IndexType::U32, 4).scalar("m", 1u32);
    let reason = invalid_reason(long.global(&[4]).enqueue());
    assert_eq!(reason, "kernel `axpy` argument 4 is given as `m` but the kernel declares only 4 arguments");

    // The refused launches marked `y` as failed (a refusal leaves no output anyone may read); the declared order
    // on a fresh array runs, and what it computes is exact (small integers in float32).
    assert!(y.to_vec().is_err());
    let y = XData::from_slice(&app, &[4], &[10.0f32; 4]).unwrap();
    let before = checked_launches();
    k.launch()
        .input("x", &x)
        .in_out("y", &y)
        .scalar("a", 2.0f32)
        .index("n", IndexType::U32, 4)
        .global(&[4])
        .enqueue()
        .unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![12.0, 14.0, 16.0, 18.0]);
    assert!(checked_launches() > before);
}

#[test]
fn names_come_back_for_programs_compiled_and_programs_loaded_from_the_disk_cache() {
    let dir = std::env::temp_dir().join(format!("cliper-kernel-args-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = ProgramCache::at(dir, 16);
    // A source no other test builds, so the first build compiles and stores it.
    let source = format!("{AXPY}\n// kernel_args {}", std::process::id());
    for round in 0..2 {
        let app = ClApp::builder().use_env(true).program_cache(Some(cache.clone())).build().unwrap();
        let program = app.build_program("axpy", &source, "").unwrap();
        if round == 0 {
            assert!(!program.from_disk_cache());
        }
        let x = XData::from_slice(&app, &[2], &[1.0f32, 2.0]).unwrap();
        let y = XData::<f32>::zeros(&app, &[2]).unwrap();
        let mut k = program.kernel("axpy").unwrap();
        let swapped = k.launch().in_out("y", &y).input("x", &x).scalar("a", 1.0f32).index("n", IndexType::U32, 2);
        let reason = invalid_reason(swapped.global(&[2]).enqueue());
        assert!(reason.contains("declares `x`"), "round {round} (from disk: {}): {reason}", program.from_disk_cache());
    }
    // PoCL keeps the names in its binaries, so the second app loads rather than compiles (a driver that kept none
    // would get a compile here instead, which the loop above checks works just as well).
    let app = ClApp::builder().use_env(true).program_cache(Some(cache.clone())).build().unwrap();
    if app.device().platform_name.contains("Portable Computing Language") {
        assert!(app.build_program("axpy", &source, "").unwrap().from_disk_cache());
    }
    cache.clear().unwrap();
}

#[test]
fn every_launch_of_a_process_is_checked() {
    let app = app();
    // A prime length: Bluestein's three kernels and the passes of its padded length, each a launch.
    let x = XData::from_slice(&app, &[2, 97], &vec![Complex32::new(1.0, 0.5); 194]).unwrap();
    let y = XData::zeros(&app, &[2, 97]).unwrap();
    // The kernels' passes (CPU devices would otherwise transform on the host, FftAlgorithm::Host).
    let mut fft = Fft::new(&x, &y, FftParams::forward().algorithm(cliper::FftAlgorithm::GlobalPasses));
    fft.init().unwrap();
    let before = checked_launches();
    fft.launch().unwrap();
    app.finish().unwrap();
    // Other tests run at the same time and add to the count; this one's launches are at least the Bluestein
    // pre-product, spectrum product and post-product plus two transforms of two passes each.
    assert!(checked_launches() - before >= 7, "{} launches checked", checked_launches() - before);
}
