//! `generic-filter` from the binary and in a pipeline file, against scipy.ndimage.generic_filter fixtures
//! (tests/fixtures/make_generic_filter.py). The inputs are float64 files kept as float64: medians, minima and
//! maxima equal scipy's exactly; means and variances within 1e-12 of the largest value (another summation order).

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/generic").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn exactly(out: &Path, want: &str) {
    let (got, want) = (f32s(out), f32s(&fixture(want)));
    assert_eq!(got.shape(), want.shape());
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w && !(g.is_nan() && w.is_nan())).count();
    assert_eq!(wrong, 0, "{wrong} elements differ from scipy's");
}

#[test]
fn generic_filter_commands_equal_scipy() {
    let dir = scratch("generic");
    let out = dir.join("out.npy");
    ok(&["generic-filter", s(&fixture("i2")), s(&out), "--function", "median", "--size", "4"]);
    exactly(&out, "median4_ties");
    ok(&["generic-filter", s(&fixture("n2")), s(&out), "--function", "max", "--footprint", s(&fixture("cross"))]);
    exactly(&out, "nan_max_cross");
    ok(&["generic-filter", s(&fixture("x2")), s(&out), "--function", "var", "--size", "5", "--border", "mirror"]);
    close(&f32s(&out), &f32s(&fixture("var5_mirror")), 1e-12, "var5_mirror");
    // A volume with --rank 2: each slice alone, scipy's size (1, 3, 3).
    ok(&["generic-filter", s(&fixture("x3")), s(&out), "--function", "var", "--rank", "2"]);
    close(&f32s(&out), &f32s(&fixture("var_batched_133")), 1e-12, "var_batched_133");
}

#[test]
fn generic_filter_runs_in_a_pipeline() {
    let dir = scratch("generic-pipeline");
    let out = dir.join("mean.npy");
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nx = '{}'\n[output]\ny = '{}'\n\n[[step]]\nop = 'generic-filter'\nfunction = 'mean'\n\
             size = [3, 5]\nborder = 'wrap'\nin = 'x'\nout = 'y'\n",
            s(&fixture("x2")),
            s(&out)
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    close(&f32s(&out), &f32s(&fixture("mean3x5_wrap")), 1e-12, "mean3x5_wrap");
}

#[test]
fn an_unknown_function_is_refused_in_one_line_and_writes_nothing() {
    let dir = scratch("generic-refusal");
    let out = dir.join("out.npy");
    let e = fails(&["generic-filter", s(&fixture("x2")), s(&out), "--function", "mode"], 1);
    assert!(e.contains("`mode` is not a window function"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!out.exists());
}
