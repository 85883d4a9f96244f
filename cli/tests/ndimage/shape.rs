//! Shaping commands from the binary (tests/fixtures/make_shape.py): `slice` on a NIfTI against nibabel's slicer
//! (data and the affine written), a plane cut from a volume, a pipeline step, and refusals that name the axis, the
//! shape and the entry and write nothing.
//!
//! Tolerances: a slice copies values (exact). Affines: a NIfTI holds its affine in float32 (srow), so the one
//! written back is within float32 rounding of nibabel's float64 one: 1e-5 absolute on entries ≤ 35.

use crate::common::*;
use ndarray::ArrayD;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/shape").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn assert_affine(got: [[f64; 4]; 4], want: &ArrayD<f64>, what: &str) {
    for (r, row) in got.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            assert!((v - want[[r, c]]).abs() <= 1e-5, "{what}: affine {got:?} vs nibabel {want}");
        }
    }
}

fn written(path: &Path) -> (ArrayD<f64>, [[f64; 4]; 4]) {
    let image = cliper::read_image(path).unwrap();
    let geometry = image.geometry.expect("a NIfTI output has a geometry");
    (image.array.to_elements::<f64>(path).unwrap(), geometry.affine())
}

#[test]
fn slice_of_a_nifti_equals_nibabels_slicer() {
    let dir = scratch("shape-slice");
    let volume = fixture("oblique.nii");
    // nibabel's [2:11, 16::-3, 9::-2] (X, Y, Z) is cliper's reversed index on [Z, Y, X].
    let out = dir.join("steps.nii");
    ok(&["slice", s(&volume), s(&out), "--slice=9::-2,16::-3,2:11"]);
    let (data, affine) = written(&out);
    assert_eq!(data, f32s(&fixture("nib_steps.npy")));
    assert_affine(affine, &f32s(&fixture("nib_steps_affine.npy")), "steps");
    // An integer index on the slice axis: a 2-D image in the plane nibabel's 4:5 keeps.
    let plane = dir.join("plane.nii.gz");
    ok(&["slice", s(&volume), s(&plane), "--slice", "4"]);
    let (data, affine) = written(&plane);
    let want = f32s(&fixture("nib_plane.npy"));
    assert_eq!(data, want.to_shape(vec![17, 13]).unwrap().to_owned().into_dyn());
    assert_affine(affine, &f32s(&fixture("nib_plane_affine.npy")), "plane");
}

#[test]
fn slice_in_a_pipeline_and_refusals() {
    let dir = scratch("shape-slice-refusals");
    let a3 = fixture("a3.npy");
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        "[input]\nx = \"IN\"\n\n[[step]]\nop = \"slice\"\nslice = \"-3:1:-2, ::-1, 4:-2\"\nin = \"x\"\nout = \"y\"\n\n\
         [output]\ny = \"OUT\"\n"
            .replace("IN", s(&a3))
            .replace("OUT", s(&dir.join("negative.npy"))),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    assert_eq!(f32s(&dir.join("negative.npy")), f32s(&fixture("slice_negative.npy")));
    let out = dir.join("never.npy");
    for (spec, says) in [
        ("--slice=:,::0", "axis 1 of shape [13, 17, 11]: step 0"),
        ("--slice=1,2,3,4", "4 entries for data of shape [13, 17, 11]"),
        ("--slice=-14", "index -14 is out of bounds for axis 0 with size 13"),
        ("--slice=1:2:3:4", "more than two `:`"),
    ] {
        let err = fails(&["slice", s(&a3), s(&out), spec], 1);
        assert!(err.contains(says), "{spec}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out.exists());
    }
}
