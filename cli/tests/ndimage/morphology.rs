//! Binary morphology from the binary, against scipy.ndimage fixtures (tests/fixtures/make_morphology.py): exact.

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/morphology").join(format!("{name}.npy"))
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
    assert_eq!(got.shape(), want.shape());
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
    assert_eq!(wrong, 0, "{wrong} elements differ from scipy's");
}

#[test]
fn binary_commands_equal_scipy() {
    let dir = scratch("binary");
    let out = dir.join("out.npy");
    single(&[
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
    single(&["binary-dilation", s(&fixture("b2")), s(&out), "--structure", s(&fixture("ell"))]);
    same(&out, "dilation_ell");
    single(&["binary-opening", s(&fixture("b2")), s(&out), "--iterations", "2"]);
    same(&out, "opening_c1_it2");
    single(&["binary-closing", s(&fixture("b2")), s(&out), "--structure", s(&fixture("ell")), "--origin", "1,0"]);
    same(&out, "closing_ell_origin");
    single(&[
        "binary-dilation",
        s(&fixture("b3")),
        s(&out),
        "--rank",
        "3",
        "--connectivity",
        "3",
        "--border-value",
        "1",
    ]);
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

/// A mask of the sample MR volume, then its distance transform: in millimetres by default (the NIfTI's voxel
/// size, 3 × 1 × 1 mm, is the sampling), against scipy's distance_transform_edt with that sampling (float32
/// arithmetic: 1e-5 relative). The distance keeps the mask's geometry.
#[test]
fn distance_of_a_nifti_mask_is_in_millimetres() {
    let dir = scratch("distance");
    let (mask, out) = (dir.join("mask.nii.gz"), dir.join("distance.nii.gz"));
    ok(&["threshold", s(&root().join("data/mr_phantom.nii.gz")), s(&mask), "--value", "0.05"]);
    ok(&["distance", s(&mask), s(&out), "--rank", "3"]);
    let got = cliper::read_image(&out).unwrap();
    let values = got.array.to_elements::<f64>(&out).unwrap();
    let want = f32s(&fixture("edt_mr_phantom_mm"));
    assert_eq!(got.array.shape(), want.shape());
    for (g, w) in values.iter().zip(want.iter()) {
        assert!((g - w).abs() <= 1e-5 * w.max(1.0), "{g} vs scipy {w}");
    }
    assert!(want.iter().any(|&w| w > 5.0), "the phantom has voxels deep inside");
    let spacing = got.geometry.unwrap().spacing_mm();
    assert!((spacing[0] - 3.0).abs() < 1e-6, "{spacing:?}");
    let e = fails(&["distance", s(&fixture("b2")), s(&dir.join("x.npy")), "--sampling", "voxel"], 1);
    assert!(e.contains("needs the input's voxel spacing"), "{e}");
}
