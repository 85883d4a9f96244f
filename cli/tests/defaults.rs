//! scipy.ndimage's default is every axis (issue 44, item 2): filters, rank filters, morphology, labels, distances
//! and hole filling span every spatial axis of a volume unless `--rank` says otherwise — a colour image's two image
//! axes, a 4-D NIfTI's three spatial axes (its fourth is a batch of volumes) — and a plain array of more than three
//! axes is refused in one line. Run as a user runs it, against scipy's results (tests/fixtures/make_ndimage.py,
//! make_morphology.py).
//!
//! Tolerances: f64 runs (`--precision double`) at 1e-12 of the largest magnitude (sums of at most a few hundred
//! products ordered differently from scipy's); f32 at 1e-5 (the same sums of values rounded to 6e-8). Labels exact.

mod common;
use cliper::{Dtype, Geometry, HostArray, Image, read_file, write_image, write_npy};
use common::*;
use ndarray::{ArrayD, Axis};
use std::path::{Path, PathBuf};

fn ndimage(name: &str) -> PathBuf {
    root().join("tests/fixtures/ndimage").join(name)
}

fn morphology(name: &str) -> PathBuf {
    root().join("tests/fixtures/morphology").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn filters_of_a_volume_span_every_axis_by_default() {
    let dir = scratch("defaults-filters");
    let volume = ndimage("volume.npy");
    let out = dir.join("out.npy");
    for (args, want) in [
        (&["gaussian-filter", "--sigma", "1.5"][..], "gaussian_1.5_3d.npy"),
        (&["convolve", "--kernel", "log:1.3"][..], "log_1.3_3d.npy"),
        (&["uniform-filter", "--size", "3"][..], "box_3_3d.npy"),
    ] {
        let mut all = vec![args[0], s(&volume), s(&out), "--precision", "double"];
        all.extend(&args[1..]);
        ok(&all);
        close(&f32s(&out), &f32s(&ndimage(want)), 1e-12, &format!("{args:?}"));
    }
    // `--rank 2` is slice by slice, as asked.
    ok(&["gaussian-filter", s(&volume), s(&out), "--sigma", "1.5", "--rank", "2", "--precision", "double"]);
    close(&f32s(&out), &f32s(&ndimage("gaussian_1.5_2d.npy")), 1e-12, "--rank 2");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn millimetres_on_a_nifti_volume_smooth_every_axis() {
    let dir = scratch("defaults-mm");
    // Voxels of 1.25 × 1.5/0.7 × 1.5/1.9 mm: `--sigma 1.5mm` is (1.2, 0.7, 1.9) voxels, scipy's fixture.
    let volume = f32s(&ndimage("volume.npy"));
    let scan = dir.join("scan.nii.gz");
    let geometry = Geometry::from_spacing([1.25, 1.5 / 0.7, 1.5 / 1.9]);
    write_image(
        &scan,
        &Image { array: HostArray::F64(volume), colour: false, geometry: Some(geometry), scaling: None },
    )
    .unwrap();
    let out = dir.join("smooth.nii.gz");
    ok(&["gaussian-filter", s(&scan), s(&out), "--sigma", "1.5mm", "--precision", "double"]);
    // NIfTI stores the voxel size in float32, so the sigmas in voxels are off by up to 6e-8 relative: 1e-6.
    close(&f32s(&out), &f32s(&ndimage("gaussian_1.2_0.7_1.9_3d.npy")), 1e-6, "gaussian 1.5mm");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn labels_and_morphology_of_a_volume_are_three_dimensional_by_default() {
    let dir = scratch("defaults-label");
    let out = dir.join("out.npy");
    ok(&["label", s(&morphology("m3")), s(&out)]);
    // scipy.ndimage.label gives int32; binary operations bool, which files hold as uint8.
    assert_eq!(read_file(&out).unwrap().dtype(), Dtype::I32, "labels are int32 as scipy's");
    let (got, want) = (f32s(&out), f32s(&morphology("label_m3_c1")));
    assert_eq!(got.shape(), want.shape());
    assert!(got == want, "label of a 3-D mask: {} components, scipy's ndi.label {}", max(&got), max(&want));
    ok(&["fill-holes", s(&morphology("cav")), s(&out)]);
    assert_eq!(read_file(&out).unwrap().dtype(), Dtype::U8, "a filled mask is uint8");
    assert!(f32s(&out) == f32s(&morphology("fill_cav")), "fill-holes of a 3-D mask");
    // `--type` still decides when given.
    ok(&["label", s(&morphology("m3")), s(&out), "--type", "f32"]);
    assert_eq!(read_file(&out).unwrap().dtype(), Dtype::F32);
    std::fs::remove_dir_all(&dir).ok();
}

fn max(a: &ArrayD<f64>) -> f64 {
    a.iter().copied().fold(0.0, f64::max)
}

#[test]
fn a_4d_nifti_is_filtered_volume_by_volume_and_a_4d_array_is_refused() {
    let dir = scratch("defaults-4d");
    let volume = f32s(&ndimage("volume.npy"));
    let series = ndarray::stack(Axis(0), &[volume.view(), (volume.clone() * 2.0).view()]).unwrap();
    let nifti = dir.join("series.nii");
    let image = Image {
        array: HostArray::F64(series.clone()),
        colour: false,
        geometry: Some(Geometry::default()),
        scaling: None,
    };
    write_image(&nifti, &image).unwrap();
    let out = dir.join("out.nii");
    ok(&["gaussian-filter", s(&nifti), s(&out), "--sigma", "1.5", "--precision", "double"]);
    let got = f32s(&out);
    let want = f32s(&ndimage("gaussian_1.5_3d.npy"));
    close(&got.index_axis(Axis(0), 0).to_owned(), &want, 1e-12, "first volume");
    close(&got.index_axis(Axis(0), 1).to_owned(), &(want * 2.0), 1e-12, "second volume");
    // The same values as a plain 4-D array: which axes are spatial is the user's to say.
    let npy = dir.join("series.npy");
    write_npy(&npy, &HostArray::F64(series.into_dyn())).unwrap();
    let said = fails(&["gaussian-filter", s(&npy), s(&dir.join("x.npy")), "--sigma", "1.5"], 1);
    assert_eq!(said.trim().lines().count(), 1, "{said}");
    assert!(said.contains("[2, 5, 6, 7]") && said.contains("--rank"), "{said}");
    assert!(!dir.join("x.npy").exists());
    ok(&["gaussian-filter", s(&npy), s(&out.with_extension("npy")), "--sigma", "1.5", "--rank", "3"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_colour_image_is_still_filtered_per_channel() {
    let dir = scratch("defaults-colour");
    let out = dir.join("out.npy");
    ok(&["gaussian-filter", s(&ndimage("rgb_20x30.png")), s(&out), "--sigma", "2"]);
    close(&f32s(&out), &f32s(&ndimage("rgb_20x30_gaussian2.npy")), 1e-5, "colour");
    std::fs::remove_dir_all(&dir).ok();
}

// Item 13: a sigma of 0 leaves its axis alone, as scipy's (it was refused).
#[test]
fn a_zero_sigma_leaves_its_axis_alone() {
    let dir = scratch("defaults-sigma0");
    let volume = ndimage("volume.npy");
    let out = dir.join("out.npy");
    for (args, want) in [
        (&["gaussian-filter", "--sigma", "0,1.2,1.9"][..], "gaussian_0_1.2_1.9_3d.npy"),
        (&["gaussian-filter", "--sigma", "1,0,2", "--order", "1,1,0"][..], "gaussian_1_0_2_order_1_1_0_3d.npy"),
        (&["convolve", "--kernel", "log:0,1.3,1.1"][..], "log_0_1.3_1.1_3d.npy"),
    ] {
        let mut all = vec![args[0], s(&volume), s(&out), "--precision", "double"];
        all.extend(&args[1..]);
        ok(&all);
        close(&f32s(&out), &f32s(&ndimage(want)), 1e-12, &format!("{args:?}"));
    }
    std::fs::remove_dir_all(&dir).ok();
}
