//! Precision by need and outputs in their natural type (issue 45), run as a user runs them on NIfTI files written
//! here:
//!
//! - a CT stored as int16 under a rescale float32 does not hold (slope 0.1) computes in f32 under
//!   `--precision auto`, within the documented bound of the float64 run (docs/formats.md), and is written as f32;
//! - one whose rescale f32 holds exactly (slope 0.5) computes the same values in f32 as the float64 run's inputs;
//! - a transposed scan still stores its int16 and scaling;
//! - labels are int32 and masks uint8, in a batch as alone, and `--type` still decides.
//!
//! Tolerance of the single-precision filter against the double one: its inputs are each within 2⁻²⁴ of their
//! value (rounding to f32) and a separable Gaussian of unit weight sums adds a few f32 roundings per pass: 1e-6 of
//! the largest magnitude is about eight times that.

mod common;
use cliper::{Dtype, Geometry, HostArray, Image, Scaling, read_file, read_image, write_image};
use common::*;
use ndarray::{ArrayD, IxDyn};
use std::path::{Path, PathBuf};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// An int16 CT of shape 9 × 11 × 13 (no axis a multiple of a tile) stored under `slope` and intercept −1024,
/// with bright blobs, written to `dir/name`.
fn scaled_scan(dir: &Path, name: &str, slope: f64) -> PathBuf {
    let stored = ArrayD::from_shape_fn(IxDyn(&[9, 11, 13]), |i| {
        let blob = (i[0] as i32 - 4).pow(2) + (i[1] as i32 - 5).pow(2) + (i[2] as i32 - 6).pow(2) < 12;
        let noise = ((i[0] * 131 + i[1] * 37 + i[2] * 11) % 97) as i32;
        (if blob { 3000 } else { 900 } + noise) as i16
    });
    let values = stored.mapv(|k| f64::from(k) * slope - 1024.0);
    let scaling = Scaling { stored: Dtype::I16, slope, intercept: -1024.0 };
    let image = Image {
        array: HostArray::F64(values),
        colour: false,
        geometry: Some(Geometry::from_spacing([2.5, 0.7, 0.7])),
        scaling: Some(scaling),
    };
    let path = dir.join(name);
    write_image(&path, &image).unwrap();
    path
}

/// NIfTI-1's datatype code of a written file.
fn datatype(path: &Path) -> i16 {
    let bytes = std::fs::read(path).unwrap();
    i16::from_le_bytes([bytes[70], bytes[71]])
}

#[test]
fn a_scan_under_a_rescale_f32_does_not_hold_computes_in_single_within_the_bound() {
    let dir = scratch("precision-tenth");
    // NIfTI's scl_slope is a float32: 0.1 is stored as 0.100000001490116…, which readers then use.
    let scan = scaled_scan(&dir, "scan.nii", f64::from(0.1f32));
    assert_eq!(datatype(&scan), 4, "stored as int16");
    let read = read_image(&scan).unwrap();
    assert_eq!(read.array.dtype(), Dtype::F64, "k · 0.1 − 1024 is no f32: the values read as float64");
    let (single, double) = (dir.join("single.nii"), dir.join("double.nii"));
    ok(&["gaussian-filter", s(&scan), s(&single), "--sigma", "1.2"]);
    ok(&["gaussian-filter", s(&scan), s(&double), "--sigma", "1.2", "--precision", "double"]);
    assert_eq!(read_file(&single).unwrap().dtype(), Dtype::F32, "auto computes a 16-bit scan in f32");
    assert_eq!(read_file(&double).unwrap().dtype(), Dtype::F64);
    let (got, want) = (f32s(&single), f32s(&double));
    close(&got, &want, 1e-6, "single against double");
    assert!(got != want, "the single run rounded nothing: it did not compute in f32");
    // A transpose keeps the stored values: int16 with the scaling again (compared in f32, as computed).
    let turned = dir.join("turned.nii");
    ok(&["transpose", s(&scan), s(&turned)]);
    assert_eq!(datatype(&turned), 4, "the transposed scan stores its int16");
    let back = read_image(&turned).unwrap();
    assert_eq!(back.scaling.map(|s| (s.stored, s.slope)), Some((Dtype::I16, f64::from(0.1f32))));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn an_exact_rescale_reads_as_f32_and_filters_as_the_double_run_does() {
    let dir = scratch("precision-half");
    let scan = scaled_scan(&dir, "scan.nii", 0.5);
    let read = read_image(&scan).unwrap();
    assert_eq!(read.array.dtype(), Dtype::F32, "k · 0.5 − 1024 is an f32: read as f32");
    let (single, double) = (dir.join("single.nii"), dir.join("double.nii"));
    ok(&["gaussian-filter", s(&scan), s(&single), "--sigma", "1.2"]);
    ok(&["gaussian-filter", s(&scan), s(&double), "--sigma", "1.2", "--precision", "double"]);
    close(&f32s(&single), &f32s(&double), 1e-6, "single against double");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn labels_are_int32_and_masks_uint8_in_a_batch_as_alone() {
    let dir = scratch("precision-types");
    let scans = dir.join("scans");
    std::fs::create_dir_all(&scans).unwrap();
    for (k, slope) in [0.5, 1.0, f64::from(0.1f32), 0.25, 2.0].iter().enumerate() {
        scaled_scan(&scans, &format!("ct{k}.nii"), *slope);
    }
    for (command, extra, dtype) in [
        ("label", &[][..], Dtype::I32),
        ("threshold", &["--value", "300"][..], Dtype::U8),
        ("threshold", &["--value", "300", "--above", "2.5"][..], Dtype::F32),
    ] {
        let out = dir.join(format!("{command}-{}", extra.len()));
        let target = format!("{}/", out.display());
        let mut args = vec![command, s(&scans), &target];
        args.extend(extra);
        ok(&args);
        for k in 0..5 {
            let name = format!("ct{k}.nii");
            let batch = read_file(out.join(&name)).unwrap();
            assert_eq!(batch.dtype(), dtype, "{command} {extra:?} {name}");
            let (file, alone) = (scans.join(&name), dir.join(format!("alone-{name}")));
            let mut single = vec![command, s(&file), s(&alone)];
            single.extend(extra);
            ok(&single);
            let same = std::fs::read(&alone).unwrap() == std::fs::read(out.join(&name)).unwrap();
            assert!(same, "{command} {extra:?} {name}: the batch's file differs from the file run alone");
        }
    }
    // `--type` decides when given.
    let typed = dir.join("typed.nii");
    ok(&["label", s(&scans.join("ct0.nii")), s(&typed), "--type", "u16"]);
    assert_eq!(read_file(&typed).unwrap().dtype(), Dtype::U16);
    std::fs::remove_dir_all(&dir).ok();
}
