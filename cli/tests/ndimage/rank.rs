//! Rank filters and grey morphology from the binary, against scipy.ndimage fixtures (tests/fixtures/make_rank.py):
//! exact equality (a rank filter picks one of its input values; the inputs are float64 files kept as float64).

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/rank").join(format!("{name}.npy"))
}

/// Runs in float32 (`--precision single`): the inputs are float32-exact and the results are picked values or
/// 0/1, so they equal scipy's exactly, and the programs are the ones tests/ndimage built (PoCL's disk cache).
fn single(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(["--precision", "single"]);
    ok(&all)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn same(out: &Path, want: &str) {
    let (got, want) = (f32s(out), f32s(&fixture(want)));
    assert_eq!(got.shape(), want.shape(), "{}", want.len());
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
    assert_eq!(wrong, 0, "{wrong} elements differ from scipy's");
}

#[test]
fn rank_commands_equal_scipy() {
    let dir = scratch("rank");
    let out = dir.join("out.npy");
    single(&["median", s(&fixture("i2")), s(&out), "--size", "4", "--border", "nearest"]);
    same(&out, "median4_nearest_ties");
    // A volume with --rank 2: each slice alone, scipy's size (1, 3, 3).
    single(&["median", s(&fixture("x3")), s(&out), "--rank", "2"]);
    same(&out, "median_batched_3x3");
    single(&["median", s(&fixture("x3")), s(&out), "--size", "5", "--rank", "3"]);
    same(&out, "median555_3d");
    single(&["minimum", s(&fixture("x2")), s(&out), "--size", "15", "--border", "constant", "--value", "-0.5"]);
    same(&out, "min15_constant");
    single(&["percentile", s(&fixture("x2")), s(&out), "--percentile", "90", "--size", "5"]);
    same(&out, "pct90_size5");
    single(&["rank-filter", s(&fixture("i2")), s(&out), "--index", "-2"]);
    same(&out, "rank-2_size3_ties");
    ok(&[
        "median",
        s(&fixture("x2")),
        s(&out),
        "--footprint",
        s(&fixture("ball")),
        "--origin",
        "1,-1",
        "--border",
        "wrap",
    ]);
    same(&out, "median_ball_origin");
    single(&["grey-dilation", s(&fixture("x2")), s(&out), "--footprint", s(&fixture("ell")), "--border", "nearest"]);
    same(&out, "dilation_ell_nearest");
    single(&["grey-opening", s(&fixture("x2")), s(&out), "--size", "3,4"]);
    same(&out, "opening3x4");
    single(&["grey-closing", s(&fixture("x2")), s(&out), "--footprint", s(&fixture("ell")), "--origin", "1,0"]);
    same(&out, "closing_ell_origin");
    // Non-flat structures and the compositions (integer data: exact in float32).
    let i2 = fixture("i2");
    let sa = fixture("sa");
    single(&["grey-dilation", s(&i2), s(&out), "--structure", s(&sa), "--border", "constant", "--value", "-1"]);
    same(&out, "dilation_sa_constant");
    single(&["black-tophat", s(&i2), s(&out), "--structure", s(&fixture("s3")), "--border", "nearest"]);
    same(&out, "black_tophat_s3_nearest");
    single(&["white-tophat", s(&i2), s(&out), "--size", "4"]);
    same(&out, "white_tophat4");
    single(&["morphological-gradient", s(&i2), s(&out), "--size", "5"]);
    same(&out, "gradient5");
    // And as a pipeline step, by scipy's name.
    let dir = scratch("grey-pipeline");
    let pipeline = dir.join("p.toml");
    let text = format!(
        "[input]\nx = \"{}\"\n\n[[step]]\nop = \"grey-morphology\"\noperation = \"morphological_laplace\"\n\
         footprint = \"{}\"\nin = \"x\"\nout = \"y\"\n\n[output]\ny = \"{}\"\n",
        s(&i2),
        s(&fixture("cross")),
        s(&dir.join("laplace.npy"))
    );
    std::fs::write(&pipeline, text).unwrap();
    single(&["run", s(&pipeline)]);
    same(&dir.join("laplace.npy"), "laplace_cross");
}

#[test]
fn rank_refusals_name_the_problem() {
    let dir = scratch("rank-refusals");
    let out = dir.join("out.npy");
    let e = fails(&["median", s(&root().join("tests/fixtures/c64.npy")), s(&out)], 1);
    assert!(e.contains("real data") && e.contains("got c32"), "{e}");
    let e = fails(&["percentile", s(&fixture("x2")), s(&out), "--percentile", "120"], 1);
    assert!(e.contains("percentile 120 is not within [-100, 100]"), "{e}");
    let e = fails(&["median", s(&fixture("x2")), s(&out), "--size", "3,3,3"], 1);
    assert!(e.contains("gives 3 sizes for a window over 2 axes"), "{e}");
    assert!(!out.exists());
}
