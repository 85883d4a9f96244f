//! The distance transforms' indices and the chamfer distance from the binary, against scipy.ndimage fixtures
//! (tests/fixtures/make_distance.py): int32 files equal to scipy's at every element, ties included.

use crate::common::*;
use cliper::{HostArray, read_npy};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/distance").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The file is int32 (scipy's type for indices and chamfer distances) and equals the fixture element for element.
fn same_int32(out: &Path, want: &str) {
    let HostArray::I32(got) = read_npy(out).unwrap() else { panic!("{out:?} is not int32") };
    let want = f32s(&fixture(want));
    assert_eq!(got.shape(), want.shape(), "{out:?}");
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| f64::from(**g) != **w).count();
    assert_eq!(wrong, 0, "{out:?}: {wrong} elements differ from scipy's");
}

#[test]
fn distance_indices_and_cdt_equal_scipy() {
    let dir = scratch("distance-indices");
    let out = dir.join("out.npy");
    ok(&["distance-transform", s(&fixture("m2")), s(&out), "--indices"]);
    same_int32(&out, "edt_2d_indices");
    ok(&["distance", s(&fixture("m3")), s(&out), "--indices", "--sampling", "3,1,0.5"]);
    same_int32(&out, "edt_3d_s3_1_05_indices");
    ok(&["distance-transform-cdt", s(&fixture("m3")), s(&out), "--metric", "taxicab"]);
    same_int32(&out, "cdt_taxicab_3d");
    ok(&["cdt", s(&fixture("m2")), s(&out), "--metric", "cityblock", "--indices"]);
    same_int32(&out, "cdt_taxicab_2d_indices");
    ok(&["cdt", s(&fixture("m2")), s(&out)]);
    same_int32(&out, "cdt_chessboard_2d");
}

/// distance-transform-bf: taxicab distances as uint32 and Euclidean indices (sampling 2,1) equal scipy's, ties
/// included (the highest position).
#[test]
fn bf_equals_scipy() {
    let dir = scratch("distance-bf");
    let out = dir.join("out.npy");
    ok(&["distance-transform-bf", s(&fixture("m2")), s(&out), "--metric", "taxicab"]);
    let HostArray::U32(got) = read_npy(&out).unwrap() else { panic!("not uint32") };
    let HostArray::U32(want) = read_npy(fixture("bf_taxicab_2d")).unwrap() else { panic!("fixture not uint32") };
    assert_eq!(got, want);
    ok(&["distance-transform-bf", s(&fixture("m2")), s(&out), "--sampling", "2,1", "--indices"]);
    same_int32(&out, "bf_euclidean_2d_s2_1_indices");
}

#[test]
fn cdt_refusals_name_the_problem_and_write_nothing() {
    let dir = scratch("cdt-refusals");
    let out = dir.join("out.npy");
    let e = fails(&["cdt", s(&fixture("m2")), s(&out), "--metric", "euclidean"], 1);
    assert!(e.contains("metric `euclidean` is not chessboard, taxicab, cityblock or manhattan"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!out.exists());
}
