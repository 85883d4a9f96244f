//! Derivative filters on the command line against scipy.ndimage fixtures (tests/fixtures/make_derivatives.py).

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/derivatives").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn gradient_magnitude_and_gaussian_orders_match_scipy() {
    let dir = scratch("derivatives");
    let x = fixture("x2");
    let out = dir.join("ggm.npy");
    // float64 data stays float64 (--precision auto): scipy's sums, 1e-12 of the scale (tests/ndimage/derivatives.rs).
    ok(&["gradient-magnitude", s(&x), s(&out), "--derivative", "gaussian:1.5"]);
    close(&f32s(&out), &f32s(&fixture("ggm_1.5_reflect_2d")), 1e-12, "gaussian_gradient_magnitude");
    ok(&["gradient-magnitude", s(&x), s(&out), "--derivative", "scharr", "--border", "wrap"]);
    close(&f32s(&out), &f32s(&fixture("scharr_mag_wrap_2d")), 1e-12, "scharr magnitude");
    ok(&["convolve", s(&x), s(&out), "--kernel", "gaussian:1.3,2.1:2,0", "--border", "nearest"]);
    close(&f32s(&out), &f32s(&fixture("gauss_o20_nearest")), 1e-12, "gaussian_filter(order=[2, 0])");
    let x3 = fixture("x3");
    ok(&[
        "gaussian-gradient-magnitude",
        s(&x3),
        s(&out),
        "--derivative",
        "gaussian:1.2",
        "--border",
        "nearest",
        "--rank",
        "3",
    ]);
    close(&f32s(&out), &f32s(&fixture("ggm_1.2_nearest_3d")), 1e-12, "3-D gaussian_gradient_magnitude");
}

#[test]
fn scipy_named_subcommands_match_scipy() {
    let dir = scratch("named-filters");
    let x = fixture("x2");
    let out = dir.join("out.npy");
    ok(&["gaussian-filter", s(&x), s(&out), "--sigma", "1.3,2.1", "--order", "0,1"]);
    close(&f32s(&out), &f32s(&fixture("gauss_o01_reflect")), 1e-12, "gaussian_filter(order=[0, 1])");
    ok(&["uniform-filter", s(&x), s(&out), "--size", "4"]);
    close(&f32s(&out), &f32s(&fixture("uniform4_reflect")), 1e-12, "uniform_filter(size=4)");
    ok(&["derivative", s(&x), s(&out), "--filter", "prewitt", "--axis", "-1", "--border", "nearest"]);
    close(&f32s(&out), &f32s(&fixture("prewitt1_nearest")), 1e-12, "prewitt(axis=-1, mode=nearest)");
    ok(&["derivative", s(&x), s(&out), "--filter", "scharr"]);
    close(&f32s(&out), &f32s(&fixture("scharr1_reflect")), 1e-12, "Scharr along x");
    let e = fails(&["derivative", s(&x), s(&out), "--axis", "2"], 1);
    assert!(e.contains("--axis 2: give -1 (x), -2 (y) or -3 (z)"), "{e}");
}

#[test]
fn gradient_magnitude_refuses_complex_data_and_unknown_derivatives() {
    let dir = scratch("derivatives-refusals");
    let out = dir.join("out.npy");
    let e = fails(&["gradient-magnitude", s(&root().join("tests/fixtures/c64.npy")), s(&out)], 1);
    assert!(e.contains("real data") && e.contains("got c32"), "{e}");
    let e = fails(&["gradient-magnitude", s(&fixture("x2")), s(&out), "--derivative", "canny"], 1);
    assert!(e.contains("`canny` is not a derivative"), "{e}");
    assert!(!out.exists());
}
