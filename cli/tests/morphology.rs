//! Binary morphology from the binary, against scipy.ndimage fixtures (tests/fixtures/make_morphology.py): exact.

mod common;
use common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/morphology").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn same(out: &Path, want: &str) {
    let (got, want) = (f32s(out), f32s(&fixture(want)));
    assert_eq!(got.shape(), want.shape());
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
    assert_eq!(wrong, 0, "{wrong} elements differ from scipy's");
}

#[test]
fn binary_commands_equal_scipy() {
    let dir = scratch("binary");
    let out = dir.join("out.npy");
    ok(&[
        "binary-erosion",
        s(&fixture("b2")),
        s(&out),
        "--connectivity",
        "2",
        "--iterations",
        "3",
        "--border-value",
        "1",
    ]);
    same(&out, "erosion_c2_it3_bv1");
    ok(&["binary-dilation", s(&fixture("b2")), s(&out), "--structure", s(&fixture("ell"))]);
    same(&out, "dilation_ell");
    ok(&["binary-opening", s(&fixture("b2")), s(&out), "--iterations", "2"]);
    same(&out, "opening_c1_it2");
    ok(&["binary-closing", s(&fixture("b2")), s(&out), "--structure", s(&fixture("ell")), "--origin", "1,0"]);
    same(&out, "closing_ell_origin");
    ok(&["binary-dilation", s(&fixture("b3")), s(&out), "--rank", "3", "--connectivity", "3", "--border-value", "1"]);
    same(&out, "dilation3d_c3_bv1");
}

#[test]
fn binary_refusals_name_the_problem() {
    let dir = scratch("binary-refusals");
    let out = dir.join("out.npy");
    let e = fails(&["binary-erosion", s(&fixture("b2")), s(&out), "--connectivity", "3"], 1);
    assert!(e.contains("connectivity 3 is not within 1 to 2"), "{e}");
    let e = fails(&["binary-erosion", s(&fixture("b2")), s(&out), "--border-value", "2"], 1);
    assert!(e.contains("border_value is 0 or 1, not 2"), "{e}");
    assert!(!out.exists());
}
