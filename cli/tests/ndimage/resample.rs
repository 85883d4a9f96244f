//! Resampling from the binary, against scipy.ndimage fixtures (tests/fixtures/make_resample.py): every
//! subcommand on .npy files, a colour PNG per channel, a NIfTI scan resampled to 1 mm voxels (the voxel size
//! written back), a pipeline step, and refusals that name what was wrong and write nothing.
//!
//! Tolerances as tests/ndimage/resample.rs: float64 runs 1e-10 absolute on data in [0, 1) (scipy's own short-axis
//! prefilter is off by 2e-11); float32 runs (PNG, NIfTI inputs) 2e-6 of the data's scale.

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/resample").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn near(out: &Path, want: &str, tol: f64) {
    let (got, want) = (f32s(out), f32s(&fixture(want)));
    assert_eq!(got.shape(), want.shape(), "{}", out.display());
    let worst = got.iter().zip(want.iter()).map(|(g, w)| (g - w).abs()).fold(0.0f64, f64::max);
    assert!(worst <= tol, "{}: worst {worst:e}", out.display());
}

#[test]
fn resampling_commands_equal_scipy() {
    let dir = scratch("resample");
    let a2 = fixture("a2");
    let out = dir.join("out.npy");
    for (args, want) in [
        (vec!["zoom", "--zoom", "1.7,0.6", "--mode", "reflect", "--cval", "-0.5"], "zoom_o3_reflect"),
        (vec!["zoom", "--zoom", "2,0.5", "--grid-mode", "--mode", "grid-constant"], "zoom_grid_o3_grid-constant"),
        (vec!["shift", "--shift=2.3,-4.6", "--order", "1", "--mode", "nearest", "--cval=-0.5"], "shift_o1_nearest"),
        (vec!["shift", "--shift", "0.3,0.6", "--no-prefilter"], "shift_noprefilter_o3"),
        (vec!["rotate", "--angle", "30"], "rotate30_o3"),
        (
            vec!["rotate", "--angle", "30", "--order", "1", "--mode", "nearest", "--no-reshape"],
            "rotate30_o1_nearest_noreshape",
        ),
        (
            vec![
                "affine-transform",
                "--matrix",
                "0.9,-0.3;0.4,1.2",
                "--offset=1.5,-2",
                "--output-shape",
                "15,14",
                "--mode",
                "grid-wrap",
                "--cval=-0.5",
            ],
            "affine_o3_grid-wrap",
        ),
        (vec!["affine-transform", "--matrix", "0.8,1.3", "--offset=0.5,-1", "--mode", "nearest"], "affine_diag_o3"),
        (vec!["spline-filter", "--order", "3", "--mode", "wrap"], "spline_o3_wrap"),
        (vec!["spline-filter", "--axis", "0", "--mode", "reflect"], "spline1d_o3_axis0_reflect"),
    ] {
        let mut all = vec![args[0], s(&a2), s(&out)];
        all.extend(&args[1..]);
        ok(&all);
        near(&out, want, 1e-10);
    }
    // 3-D: a rotation in the plane of axes 0 and 2.
    ok(&["rotate", s(&fixture("a3")), s(&out), "--angle", "17", "--axes", "0,2", "--mode", "mirror", "--no-reshape"]);
    near(&out, "rotate3_17_axes02_o3_mirror", 1e-10);
    // map-coordinates: data, coordinates, output.
    ok(&["map-coordinates", s(&a2), s(&fixture("coords2")), s(&out), "--mode", "grid-wrap", "--cval=-0.5"]);
    near(&out, "map_o3_grid-wrap", 1e-10);
}

#[test]
fn colour_images_and_scans_resample_as_users_expect() {
    let dir = scratch("resample-colour");
    let rgb = root().join("tests/fixtures/ndimage/rgb_20x30.png");
    let out = dir.join("out.npy");
    // Per channel: the factors are the image axes'; the channels stay three.
    let said = ok(&["zoom", s(&rgb), s(&out), "--zoom", "1.5,0.8", "--order", "1"]);
    assert!(said.contains("[3, 30, 24]"), "{said}");
    near(&out, "rgb_zoom_o1", 2e-6 * 255.0);
    ok(&["rotate", s(&rgb), s(&out), "--angle", "30"]);
    near(&out, "rgb_rotate30_o3", 2e-6 * 255.0);
    // A colour PNG stays a colour PNG: the cubic's overshoot rounded and clamped to 0..=255, as scipy does for
    // uint8 data.
    let png = dir.join("big.png");
    assert!(ok(&["zoom", s(&rgb), s(&png), "--zoom", "2"]).contains("[3, 40, 60] u8"));
    let got = cliper::read_image(&png).unwrap().array.to_elements::<f64>(&png).unwrap();
    let want = f32s(&fixture("rgb_zoom2_u8"));
    assert_eq!(got.shape(), want.shape());
    // scipy rounds its float64 result, cliper its float32 one: a value within 1e-5 of a half may round apart.
    assert!(got.iter().zip(want.iter()).all(|(g, w)| (g - w).abs() <= 1.0));
    let apart = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
    assert!(apart <= 3, "{apart} of {} differ by one", want.len());
    // A 3 mm-slice scan to isotropic 1 mm voxels: 20 slices → 58 (the same 57 mm), the voxel size written.
    let scan = root().join("data/mr_phantom.nii.gz");
    let iso = dir.join("iso.nii.gz");
    ok(&["zoom", s(&scan), s(&iso), "--spacing", "1", "--order", "1"]);
    let back = cliper::read_image(&iso).unwrap();
    let geometry = back.geometry.expect("a NIfTI output has a geometry");
    let spacing = geometry.spacing_mm();
    assert!(spacing.iter().all(|v| (v - 1.0).abs() < 1e-6), "{spacing:?}");
    let got = back.array.to_elements::<f64>(&iso).unwrap();
    let want = f32s(&fixture("mr_1mm_o1"));
    assert_eq!(got.shape(), want.shape());
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst = got.iter().zip(want.iter()).map(|(g, w)| (g - w).abs()).fold(0.0f64, f64::max);
    assert!(worst <= 2e-6 * scale, "worst {worst:e} of {scale}");
}

#[test]
fn resampling_in_a_pipeline_and_refusals() {
    let dir = scratch("resample-refusals");
    let a2 = fixture("a2");
    // A pipeline step, followed by an element-wise step.
    let pipeline = dir.join("p.toml");
    std::fs::write(
        &pipeline,
        "[input]\nx = \"IN\"\n\n[[step]]\nop = \"zoom\"\nzoom = \"1.7,0.6\"\nmode = \"reflect\"\ncval = -0.5\n\
         in = \"x\"\nout = \"z\"\n\n[[step]]\nop = \"expression\"\nexpr = \"2 * x\"\nin = \"z\"\n\
         out = \"y\"\n\n[output]\ny = \"OUT\"\n"
            .replace("IN", s(&a2))
            .replace("OUT", s(&dir.join("twice.npy"))),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    let (got, want) = (f32s(&dir.join("twice.npy")), f32s(&fixture("zoom_o3_reflect")));
    assert!(got.iter().zip(want.iter()).all(|(g, w)| (g - 2.0 * w).abs() < 1e-9));
    // Refusals: one line naming what was wrong; nothing written.
    let out = dir.join("never.npy");
    for (args, says) in [
        (vec!["zoom", s(&a2), s(&out), "--zoom", "2", "--mode", "edge"], "edge"),
        (vec!["zoom", s(&a2), s(&out)], "zoom"),
        (vec!["zoom", s(&a2), s(&out), "--spacing", "1"], "voxel size"),
        (vec!["zoom", s(&a2), s(&out), "--zoom", "2", "--order", "7"], "order 7"),
        (vec!["zoom", s(&a2), s(&out), "--zoom", "2,2,2"], "3 zoom factors for 2 axes"),
        (vec!["affine-transform", s(&a2), s(&out), "--matrix", "1,0,0;0,1,0;0,0,2"], "homogeneous"),
        (vec!["rotate", s(&a2), s(&out), "--angle", "10", "--axes", "0,5"], "(0, 5) for an input of 2 axes"),
        (vec!["map-coordinates", s(&a2), s(&fixture("coords3")), s(&out)], "[3, 4, 5]"),
    ] {
        let e = fails(&args, 1);
        assert!(e.contains(says), "{args:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(!out.exists(), "{args:?} wrote {}", out.display());
    }
}
