//! The committed files in `data/` hold what `data/README.md` says they hold (they are made by
//! `cargo run --release --example make_sample_data`): each is checked against a float64
//! definition written here (the phantom from the published ellipse table, the coil images by a host FFT),
//! not against the generator's output.

mod common;
use cliper::prelude::*;
use cliper::{read_mat, read_png, read_tiff};
use common::*;
use ndarray::{Array2, ArrayD, Axis};
use num_complex::{Complex32, Complex64};
use rustfft::FftPlanner;
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data").join(name)
}

#[test]
fn the_sample_files_fit_in_two_megabytes() {
    // Files and the files of folders (the DICOM series).
    let size = |path: PathBuf| -> u64 {
        match std::fs::read_dir(&path) {
            Ok(files) => files.map(|f| f.unwrap().metadata().unwrap().len()).sum(),
            Err(_) => std::fs::metadata(&path).unwrap().len(),
        }
    };
    let total: u64 = std::fs::read_dir(data("")).unwrap().map(|e| size(e.unwrap().path())).sum();
    assert!(total <= 2 * 1024 * 1024, "data/ holds {total} bytes");
}

/// The modified Shepp-Logan phantom as published (Toft 1996, Table B.3; the 3-D extents c are the ones
/// cliper documents, every centre at z = 0): intensity, semi-axes a (x), b (y), c (z), centre x0, y0, and the
/// rotation about z in degrees. Written here from the literature in float64, not taken from cliper.
const TOFT: [[f64; 7]; 10] = [
    [1.0, 0.69, 0.92, 0.81, 0.0, 0.0, 0.0],
    [-0.8, 0.6624, 0.874, 0.78, 0.0, -0.0184, 0.0],
    [-0.2, 0.11, 0.31, 0.22, 0.22, 0.0, -18.0],
    [-0.2, 0.16, 0.41, 0.28, -0.22, 0.0, 18.0],
    [0.1, 0.21, 0.25, 0.41, 0.0, 0.35, 0.0],
    [0.1, 0.046, 0.046, 0.05, 0.0, 0.1, 0.0],
    [0.1, 0.046, 0.046, 0.05, 0.0, -0.1, 0.0],
    [0.1, 0.046, 0.023, 0.05, -0.08, -0.605, 0.0],
    [0.1, 0.023, 0.023, 0.02, 0.0, -0.606, 0.0],
    [0.1, 0.023, 0.046, 0.02, 0.06, -0.605, 0.0],
];

/// The phantom on `[depth, height, width]` pixel centres of the field of view [−1, 1]³ (row 0 at the top,
/// y up), and for each voxel whether it lies within 1e-5 of an ellipse's edge: there the table's rounding to
/// `float` in cliper's kernel may put the voxel on the other side, so those voxels are not compared.
fn toft_phantom(depth: usize, height: usize, width: usize) -> (Vec<f64>, Vec<bool>) {
    let centre = |i: usize, n: usize| if n == 1 { 0.0 } else { (2 * i + 1) as f64 / n as f64 - 1.0 };
    let mut values = Vec::new();
    let mut near_edge = Vec::new();
    for k in 0..depth {
        for i in 0..height {
            for j in 0..width {
                let (x, y, z) = (centre(j, width), -centre(i, height), centre(k, depth));
                let (mut value, mut edge) = (0.0, false);
                for [rho, a, b, c, x0, y0, degrees] in TOFT {
                    let (sin, cos) = degrees.to_radians().sin_cos();
                    let (dx, dy) = (x - x0, y - y0);
                    let r = ((dx * cos + dy * sin) / a).powi(2) + ((dy * cos - dx * sin) / b).powi(2) + (z / c).powi(2);
                    value += if r <= 1.0 { rho } else { 0.0 };
                    edge |= (r - 1.0).abs() < 1e-5;
                }
                values.push(value);
                near_edge.push(edge);
            }
        }
    }
    (values, near_edge)
}

#[test]
fn phantom_images_are_the_published_phantom() {
    let (image, near_edge) = toft_phantom(1, 256, 256);
    // Intensities that float arithmetic makes inexact (0.2 = 1 − 0.8, …) differ from the published sum by a
    // few ulps of 1: 1e-6 is far below the smallest step between tissues (0.1).
    let same = |got: f64, want: f64| (got - want).abs() < 1e-6;
    let HostArray::U16(png) = read_png(data("phantom_256.png")).unwrap() else { panic!("the PNG is not 16-bit grey") };
    assert_eq!(png.shape(), &[256, 256]);
    let HostArray::F32(tif) = read_tiff(data("phantom_256.tif")).unwrap() else { panic!("the TIFF is not f32") };
    assert_eq!(tif.shape(), &[256, 256]);
    let mut compared = 0;
    for (((&p, &t), &want), &edge) in png.iter().zip(&tif).zip(&image).zip(&near_edge) {
        if !edge {
            // 16-bit PNG: round(65535 · intensity); f32 TIFF: the intensity.
            assert_eq!(p, (want * 65535.0).round() as u16);
            assert!(same(t.into(), want), "{t} vs {want}");
            compared += 1;
        }
    }
    // The edge allowance may skip a handful of pixels, never a visible part of the image.
    assert!(compared > 256 * 256 - 64, "only {compared} pixels away from ellipse edges");

    let (volume, near_edge) = toft_phantom(64, 64, 64);
    let HostArray::F32(stack) = read_tiff(data("phantom_64x64x64.tif")).unwrap() else { panic!("not f32 pages") };
    assert_eq!(stack.shape(), &[64, 64, 64]);
    let mut compared = 0;
    for ((&got, &want), &edge) in stack.iter().zip(&volume).zip(&near_edge) {
        if !edge {
            assert!(same(got.into(), want), "{got} vs {want}");
            compared += 1;
        }
    }
    assert!(compared > 64 * 64 * 64 - 64, "only {compared} voxels away from ellipse edges");
}

/// The voxel centres' positions (RAS, mm) the README gives the CT series and the NIfTI volume: `spacing`
/// (slice, row, column), columns to the patient's left, rows posterior, slices up, centred on the origin.
fn expected_position(shape: [usize; 3], spacing: [f64; 3], index: [f64; 3]) -> [f64; 3] {
    let offset = |a: usize| (index[a] - (shape[a] as f64 - 1.0) / 2.0) * spacing[a];
    [-offset(2), -offset(1), offset(0)]
}

#[test]
fn the_ct_series_is_the_phantom_in_hounsfield_units_where_the_readme_puts_it() {
    let series = cliper::read_dicom(data("ct_series")).unwrap();
    assert_eq!((series.info.modality.as_str(), series.info.files.len()), ("CT", 24));
    // Stored HU + 1024 with RescaleIntercept −1024: whole Hounsfield units in i16.
    let HostArray::I16(hu) = series.image.array else {
        panic!("HU should be i16, got {:?}", series.image.array.dtype())
    };
    let (volume, near_edge) = toft_phantom(24, 64, 64);
    let hounsfield = |v: f64| if v <= 1e-9 { -1000.0 } else { 40.0 + (v - 0.2) * 1200.0 };
    let mut compared = 0;
    for ((&got, &want), &edge) in hu.iter().zip(&volume).zip(&near_edge) {
        if !edge {
            assert_eq!(f64::from(got), hounsfield(want).round(), "intensity {want}");
            compared += 1;
        }
    }
    assert!(compared > 24 * 64 * 64 - 64, "only {compared} voxels away from ellipse edges");
    let g = series.image.geometry.unwrap();
    for index in [[0.0, 0.0, 0.0], [23.0, 63.0, 63.0], [5.0, 17.0, 40.0]] {
        let (got, want) = (g.position(index), expected_position([24, 64, 64], [2.5, 0.8, 0.8], index));
        assert!(got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9), "voxel {index:?} at {got:?}, not {want:?}");
    }
}

#[test]
fn the_nifti_volume_is_the_phantom_where_the_readme_puts_it() {
    let image = cliper::read_nifti(data("mr_phantom.nii.gz")).unwrap();
    let HostArray::F32(volume) = image.array else { panic!("not f32") };
    assert_eq!(volume.shape(), &[20, 64, 64]);
    let (want, near_edge) = toft_phantom(20, 64, 64);
    let mut compared = 0;
    for ((&got, &want), &edge) in volume.iter().zip(&want).zip(&near_edge) {
        if !edge {
            assert!((f64::from(got) - want).abs() < 1e-6, "{got} vs {want}");
            compared += 1;
        }
    }
    assert!(compared > 20 * 64 * 64 - 64, "only {compared} voxels away from ellipse edges");
    let g = image.geometry.unwrap();
    for index in [[0.0, 0.0, 0.0], [19.0, 63.0, 63.0], [7.0, 30.0, 2.0]] {
        let (got, want) = (g.position(index), expected_position([20, 64, 64], [3.0, 1.0, 1.0], index));
        assert!(got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "voxel {index:?} at {got:?}, not {want:?}");
    }
}

/// The centred inverse DFT of every trailing `[n, n]` slice, `fftshift(ifft2(ifftshift(k)))` with numpy's
/// scaling (1/n² on the inverse), in float64.
fn centred_ifft2(k: &ArrayD<Complex64>) -> ArrayD<Complex64> {
    let n = k.shape()[k.ndim() - 1];
    let ifft = FftPlanner::new().plan_fft_inverse(n);
    let mut out = k.clone();
    let mut slices = out.view_mut().into_shape_with_order((k.len() / (n * n), n, n)).unwrap();
    for mut slice in slices.outer_iter_mut() {
        let mut shifted = Array2::from_shape_fn((n, n), |(i, j)| slice[[(i + n / 2) % n, (j + n / 2) % n]]);
        for axis in [Axis(0), Axis(1)] {
            for mut lane in shifted.lanes_mut(axis) {
                let mut line = lane.to_vec();
                ifft.process(&mut line);
                lane.iter_mut().zip(line).for_each(|(v, z)| *v = z / n as f64);
            }
        }
        for i in 0..n {
            for j in 0..n {
                slice[[(i + n / 2) % n, (j + n / 2) % n]] = shifted[[i, j]];
            }
        }
    }
    out
}

#[test]
fn kspace_is_the_phantom_seen_by_eight_normalised_coils() {
    let from_mat = KData::<Complex32>::load(app(), data("kspace.mat")).unwrap();
    let from_cfl = KData::<Complex32>::load(app(), data("kspace.cfl")).unwrap();
    assert_eq!((from_mat.frame_shape(), from_mat.num_coils(), from_mat.spatial_shape()), (&[][..], 8, &[64, 64][..]));
    // MAT and CFL hold the same numbers.
    let kspace = fetch(from_mat.as_xdata());
    assert_same(&fetch(from_cfl.as_xdata()), &kspace, "k-space: MAT vs CFL");
    let maps = fetch(from_mat.sensitivity_maps().unwrap());
    assert_same(&fetch(from_cfl.sensitivity_maps().unwrap()), &maps, "maps: MAT vs CFL");
    let mask = from_mat.sampling_mask().unwrap().to_ndarray().unwrap();
    assert_eq!(from_cfl.sampling_mask().unwrap().to_ndarray().unwrap(), mask);

    // Σ_c |s_c|² = 1 everywhere: the maps are stored in f32 (relative rounding 2⁻²⁴ per part), so 1e-6 is
    // ~16 roundings of slack while any unnormalised map is off by O(1).
    let power = maps.map_axis(Axis(0), |s| s.iter().map(|z| z.norm_sqr()).sum::<f64>());
    assert!(
        power.iter().all(|p| (p - 1.0).abs() < 1e-6),
        "Σ|s|² ranges over {:?}",
        power.iter().fold((2.0f64, 0.0f64), |(a, b), &p| (a.min(p), b.max(p)))
    );

    // Each coil image is the phantom times its map, and the coil combination Σ conj(s_c)·image_c recovers
    // the phantom. The k-space values are f32: their rounding (2⁻²⁴ relative) spread over 64² samples leaves
    // errors ~1e-8 on intensities up to 1, so 1e-6 is a tight bound that any shift or sign slip breaks.
    let images = centred_ifft2(&kspace);
    let (phantom, _) = toft_phantom(1, 64, 64);
    let mut worst = 0.0f64;
    for i in 0..64 {
        for j in 0..64 {
            let combined: Complex64 = (0..8).map(|c| maps[[c, i, j]].conj() * images[[c, i, j]]).sum();
            worst = worst.max((combined - phantom[i * 64 + j]).norm());
            for c in 0..8 {
                worst = worst.max((images[[c, i, j]] - maps[[c, i, j]] * phantom[i * 64 + j]).norm());
            }
        }
    }
    assert!(worst < 1e-6, "largest error {worst:e}");

    // The mask: every other phase-encoding column plus the 16 central ones, 0 or 1.
    for ((_, j), &m) in mask.view().into_dimensionality::<ndarray::Ix2>().unwrap().indexed_iter() {
        assert_eq!(m, if j % 2 == 0 || j.abs_diff(32) < 8 { 1.0 } else { 0.0 });
    }
}

#[test]
fn matrices_for_the_mat_pipeline_example() {
    let variables = read_mat(data("matrices.mat")).unwrap();
    let names: Vec<&str> = variables.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["A", "B"]);
    let a = XData::<f64>::load_mat(app(), data("matrices.mat"), "A").unwrap();
    let b = XData::<f64>::load_mat(app(), data("matrices.mat"), "B").unwrap();
    assert_eq!((a.shape(), b.shape()), (&[64, 48][..], &[48, 64][..]));
    for v in a.to_vec().unwrap().into_iter().chain(b.to_vec().unwrap()) {
        assert!((-0.25..0.25).contains(&v), "{v}");
    }
}
