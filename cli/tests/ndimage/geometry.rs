//! `resample-from-to` from the binary against nibabel.processing.resample_from_to (tests/fixtures/make_geometry.py):
//! the data, the reference's grid written into the output NIfTI and the input's type kept (nibabel's), as a
//! subcommand, a pipeline step and a batch onto one reference; refusals in one line that write nothing.
//!
//! Tolerances: order 0 exact (no output voxel maps within 1e-9 of a rounding boundary: boundaries.txt); orders 1
//! and 3 1e-5 absolute on data in [0, 1) (float32 sums against scipy's float64 ones rounded: see
//! tests/ndimage/geometry.rs). The affine written is the reference's own (both float32 srows): 1e-12.

use crate::common::*;
use ndarray::ArrayD;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/geometry").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The image written at `path`: its values, its type and its affine.
fn written(path: &Path) -> (ArrayD<f64>, cliper::Dtype, [[f64; 4]; 4]) {
    let image = cliper::read_image(path).unwrap();
    let affine = image.geometry.expect("a NIfTI output has a geometry").affine();
    (image.array.to_elements::<f64>(path).unwrap(), image.array.dtype(), affine)
}

fn assert_matches(got: &ArrayD<f64>, want: &ArrayD<f64>, exact: bool, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let worst = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0f64, f64::max);
    assert!(if exact { worst == 0.0 } else { worst <= 1e-5 }, "{what}: worst difference {worst:e}");
}

fn assert_same_affine(got: [[f64; 4]; 4], want: [[f64; 4]; 4], what: &str) {
    let worst = got.iter().flatten().zip(want.iter().flatten()).map(|(g, w)| (g - w).abs()).fold(0.0f64, f64::max);
    assert!(worst <= 1e-12, "{what}: affine {got:?} vs the reference's {want:?}");
}

#[test]
fn resample_from_to_equals_nibabel() {
    let dir = scratch("geometry-resample-from-to");
    for (pair, input, reference) in [
        ("iso_to_oblique", "iso", "oblique"),
        ("iso_to_aligned", "iso", "aligned"),
        ("oblique_to_iso", "oblique", "iso"),
    ] {
        let (input_path, reference_path) = (fixture(&format!("{input}.nii")), fixture(&format!("{reference}.nii")));
        let reference_affine = written(&reference_path).2;
        for (case, flags) in [
            ("order0", &["--order", "0"][..]),
            ("order1", &["--order", "1"]),
            ("order3", &[]),
            ("order1_nearest", &["--order", "1", "--mode", "nearest"]),
            ("order3_cval", &["--cval", "-1"]),
        ] {
            let out = dir.join(format!("{pair}_{case}.nii.gz"));
            let mut args = vec!["resample-from-to", s(&input_path), s(&reference_path), s(&out)];
            args.extend(flags);
            ok(&args);
            let (data, dtype, affine) = written(&out);
            let what = format!("{pair} {case}");
            assert_matches(&data, &f32s(&fixture(&format!("{pair}_{case}.npy"))), case == "order0", &what);
            // nibabel's result keeps the input's type (float32), whatever the reference holds (int16 zeros for
            // `aligned`).
            assert_eq!(dtype, cliper::Dtype::F32, "{what}");
            assert_same_affine(affine, reference_affine, &what);
        }
    }
}

#[test]
fn resample_from_to_as_a_step_and_over_a_batch() {
    let dir = scratch("geometry-resample-steps");
    let (iso, oblique) = (fixture("iso.nii"), fixture("oblique.nii"));
    // A pipeline step reads two arrays: the input, then the reference.
    let pipeline = dir.join("p.toml");
    let out = dir.join("step.nii");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nx = \"{}\"\nref = \"{}\"\n\n[[step]]\nop = \"resample-from-to\"\norder = 1\nin = [\"x\", \"ref\"]\n\
             out = \"y\"\n\n[output]\ny = \"{}\"\n",
            s(&iso),
            s(&oblique),
            s(&out)
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    assert_matches(&written(&out).0, &f32s(&fixture("iso_to_oblique_order1.npy")), false, "step");
    // A folder of inputs onto one reference: every file resampled onto its grid.
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    for name in ["a.nii", "b.nii"] {
        std::fs::copy(&iso, inputs.join(name)).unwrap();
    }
    let outputs = dir.join("out");
    ok(&["resample-from-to", s(&inputs), s(&oblique), &format!("{}/", s(&outputs)), "--order", "1"]);
    for name in ["a.nii", "b.nii"] {
        let (data, _, affine) = written(&outputs.join(name));
        assert_matches(&data, &f32s(&fixture("iso_to_oblique_order1.npy")), false, name);
        assert_same_affine(affine, written(&oblique).2, name);
    }
}

#[test]
fn resample_from_to_refuses_inputs_without_a_grid() {
    let dir = scratch("geometry-resample-refusals");
    let never = dir.join("never.nii");
    let plain = dir.join("plain.npy");
    cliper::write_npy(&plain, &cliper::read_file(fixture("iso.nii")).unwrap()).unwrap();
    for (args, says) in [
        (vec![s(&plain), s(&fixture("oblique.nii"))], "INPUT (shape [9, 13, 11]) has none"),
        (vec![s(&fixture("iso.nii")), s(&plain)], "REFERENCE (shape [9, 13, 11]) has none"),
    ] {
        let mut all = vec!["resample-from-to"];
        all.extend(args);
        all.push(s(&never));
        let err = fails(&all, 1);
        assert!(err.contains(says), "{all:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!never.exists());
    }
}
