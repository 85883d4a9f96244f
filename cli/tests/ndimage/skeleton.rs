//! skeletonize from the binary, against scikit-image 0.26 fixtures (tests/fixtures/make_skeleton.py): exact (0/1),
//! on .npy files (2-D Zhang and Lee, 3-D Lee), written as uint8, as a pipeline step, and skimage's refusal of Zhang in
//! 3-D in one line.

use crate::common::*;
use cliper::{HostArray, read_file};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/skeleton").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The output equals the fixture `want` element for element, and is a uint8 mask.
fn same(out: &Path, want: &str) {
    assert!(matches!(read_file(out).unwrap(), HostArray::U8(_)), "{}: not uint8", out.display());
    let (got, want) = (f32s(out), f32s(&fixture(want)));
    assert_eq!(got.shape(), want.shape());
    let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
    assert_eq!(wrong, 0, "{wrong} elements differ from skimage's");
}

#[test]
fn skeletonize_command_equals_skimage() {
    let dir = scratch("skeletonize");
    let out = dir.join("out.npy");
    ok(&["skeletonize", s(&fixture("blobs2")), s(&out)]);
    same(&out, "blobs2_zhang");
    ok(&["skeletonize", s(&fixture("ring2")), s(&out), "--method", "lee"]);
    same(&out, "ring2_lee");
    ok(&["skeletonize", s(&fixture("blobs3")), s(&out)]);
    same(&out, "blobs3_lee");
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nmask = \"{}\"\n\n[[step]]\nop = \"skeletonize\"\nmethod = \"zhang\"\nin = \"mask\"\n\
             out = \"thin\"\n\n[output]\nthin = \"{}\"\n",
            s(&fixture("border2")),
            s(&dir.join("thin.npy"))
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    same(&dir.join("thin.npy"), "border2_zhang");
}

#[test]
fn zhang_in_3d_is_refused_in_one_line() {
    let dir = scratch("skeletonize-refused");
    let out = dir.join("out.npy");
    let e = fails(&["skeletonize", s(&fixture("blobs3")), s(&out), "--method", "zhang"], 1);
    assert!(e.contains("zhang") && e.contains("[13, 17, 11]") && e.trim().lines().count() <= 2, "{e}");
    assert!(!out.exists(), "a refused run left {}", out.display());
}
