//! Writes the sample inputs in `data/` (see `data/README.md` for what each file holds and how it was made).
//!
//! Run with `cargo run --release --example make_sample_data [-- OUTPUT_DIR]` (default `data/`). Everything is
//! computed on the host in float64 — the phantom from `SheppLogan::reference`, the coil maps from closed
//! formulas, k-space with rustfft — so the files are the same on every machine; `tests/sample_data.rs` checks
//! the committed files against the same definitions.

use cliper::prelude::*;
use cliper::{DicomSeriesOptions, Image, write_dicom_series, write_mat, write_nifti};
use ndarray::{Array2, Array3, ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};
use rustfft::FftPlanner;
use std::f64::consts::PI;
use std::path::PathBuf;

/// Image size of the 2-D phantom files.
const IMAGE: usize = 256;
/// Edge of the phantom volume.
const VOLUME: usize = 64;
/// Coils and matrix size of the simulated k-space.
const COILS: usize = 8;
const KSPACE: usize = 64;

fn main() -> cliper::Result<()> {
    let out = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "data".into()));
    std::fs::create_dir_all(&out).map_err(|source| cliper::Error::Io { path: out.clone(), source })?;
    // The device only carries arrays to the savers here; PoCL is always present.
    let app = ClApp::builder().device_type(DeviceKind::Cpu).build().or_else(|_| ClApp::new())?;

    let image = SheppLogan::<f32>::reference(&[IMAGE, IMAGE])?;
    let image_f32: Vec<f32> = image.iter().map(|&v| v as f32).collect();
    let x = XData::from_slice(&app, &[IMAGE, IMAGE], &image_f32)?;
    // 16-bit PNG: round(65535 · intensity); the phantom's intensities lie in [0, 1].
    let scaled = XData::from_slice(&app, &[IMAGE, IMAGE], &image.iter().map(|v| v * 65535.0).collect::<Vec<_>>())?;
    let png = PngOptions { depth: PngDepth::Sixteen, scale: Scale::Round, clip: false, colour: false };
    scaled.save_png(out.join("phantom_256.png"), png)?;
    let deflate = TiffOptions { compression: TiffCompression::Deflate, colour: false };
    x.save_tiff(out.join("phantom_256.tif"), deflate)?;

    let volume = SheppLogan::<f32>::reference(&[VOLUME, VOLUME, VOLUME])?;
    let volume: Vec<f32> = volume.iter().map(|&v| v as f32).collect();
    XData::from_slice(&app, &[VOLUME, VOLUME, VOLUME], &volume)?
        .save_tiff(out.join("phantom_64x64x64.tif"), deflate)?;

    let (kspace, maps, mask) = simulate_kspace()?;
    let k = KData::new(XData::from_ndarray(&app, &kspace)?, 2)?
        .with_sensitivity_maps(XData::from_ndarray(&app, &maps)?)?
        .with_sampling_mask(XData::from_ndarray(&app, &mask)?)?;
    k.save(out.join("kspace.mat"))?;
    k.save(out.join("kspace.cfl"))?;

    let (a, b) = matrices();
    write_mat(out.join("matrices.mat"), &[("A", &HostArray::F64(a)), ("B", &HostArray::F64(b))], true)?;

    // A CT-like series and an MR-like NIfTI volume of the 3-D phantom, with the geometry scanners write.
    let (stored, geometry) = ct_phantom()?;
    let ct = Image { array: HostArray::U16(stored), colour: false, geometry: Some(geometry), scaling: None };
    let options = DicomSeriesOptions {
        modality: "CT".into(),
        series_description: "cliper phantom, axial".into(),
        patient_name: "Phantom^SheppLogan".into(),
        patient_id: "cliper-phantom".into(),
        rescale: (1.0, -1024.0),
    };
    write_dicom_series(out.join("ct_series"), &ct, &options)?;
    let (mr, geometry) = mr_phantom()?;
    write_nifti(out.join("mr_phantom.nii.gz"), &HostArray::F32(mr), false, Some(&geometry))?;

    for entry in std::fs::read_dir(&out).map_err(|source| cliper::Error::Io { path: out.clone(), source })? {
        let path = entry.map_err(|source| cliper::Error::Io { path: out.clone(), source })?.path();
        let size = match std::fs::read_dir(&path) {
            Ok(files) => files.filter_map(|f| f.ok()?.metadata().ok()).map(|m| m.len()).sum(),
            Err(_) => std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0),
        };
        println!("{size:>9} B  {}", path.display());
    }
    Ok(())
}

/// Slices, rows and columns of the CT series; its pixel and slice spacing in mm.
const CT: [usize; 3] = [24, 64, 64];
const CT_SPACING: [f64; 3] = [2.5, 0.8, 0.8];

/// Hounsfield units of a phantom intensity: air (0) at −1000, brain (0.2) at 40, skull (1) at 1000, the
/// features (0.1–0.4) between −80 and 280.
pub fn hounsfield(intensity: f64) -> f64 {
    if intensity <= 0.0 { -1000.0 } else { 40.0 + (intensity - 0.2) * 1200.0 }
}

/// The 3-D phantom as a CT scanner stores it: `HU + 1024` in u16 (RescaleIntercept −1024), axial slices
/// from the feet up, rows running posterior and columns to the patient's left (DICOM's usual axial
/// orientation), centred on the scanner's origin.
fn ct_phantom() -> cliper::Result<(ArrayD<u16>, Geometry)> {
    let volume = SheppLogan::<f32>::reference(&CT)?;
    let stored: Vec<u16> = volume.iter().map(|&v| (hounsfield(v) + 1024.0).round() as u16).collect();
    let stored =
        ArrayD::from_shape_vec(IxDyn(&CT), stored).map_err(|e| cliper::Error::invalid("ct_phantom", e.to_string()))?;
    Ok((stored, axial(CT, CT_SPACING)))
}

/// DICOM's usual axial orientation — slices up (+z), rows running posterior, columns to the patient's left — for
/// a volume of `shape` with `spacing` (slice, row, column), its centre at the scanner's origin.
fn axial(shape: [usize; 3], spacing: [f64; 3]) -> Geometry {
    let direction = [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [-1.0, 0.0, 0.0]];
    let mut geometry = Geometry { spacing, direction, ..Geometry::default() };
    let centre = geometry.position(shape.map(|n| (n as f64 - 1.0) / 2.0));
    geometry.origin = centre.map(|c| -c);
    geometry
}

/// Slices, rows and columns of the NIfTI volume, and its voxel size (mm): thick slices, as MR often has.
const MR: [usize; 3] = [20, 64, 64];
const MR_SPACING: [f64; 3] = [3.0, 1.0, 1.0];

/// The 3-D phantom as an MR volume in float32, oriented as the CT series (as dcm2niix writes a series it does
/// not reorder: columns to the patient's left, rows posterior, slices up), centred on the origin.
fn mr_phantom() -> cliper::Result<(ArrayD<f32>, Geometry)> {
    let volume = SheppLogan::<f32>::reference(&MR)?;
    let volume: Vec<f32> = volume.iter().map(|&v| v as f32).collect();
    let volume =
        ArrayD::from_shape_vec(IxDyn(&MR), volume).map_err(|e| cliper::Error::invalid("mr_phantom", e.to_string()))?;
    Ok((volume, axial(MR, MR_SPACING)))
}

/// Smooth synthetic coil sensitivities, `[coils, y, x]`: coil `c` sits at angle `2πc/C` on a circle of radius
/// 1.5 around the field of view `[-1, 1]²`, with a Gaussian magnitude (width 1) and a linear phase across the
/// image, normalised so that `Σ_c |s_c|² = 1` at every pixel.
fn coil_maps(n: usize) -> Array3<Complex64> {
    let raw = Array3::from_shape_fn((COILS, n, n), |(c, i, j)| {
        let (y, x) = pixel_centre(n, i, j);
        let angle = 2.0 * PI * c as f64 / COILS as f64;
        let (cy, cx) = (1.5 * angle.sin(), 1.5 * angle.cos());
        let magnitude = (-((x - cx).powi(2) + (y - cy).powi(2)) / 2.0).exp();
        let phase = angle + 0.5 * PI * (x * angle.cos() + y * angle.sin());
        Complex64::from_polar(magnitude, phase)
    });
    let mut maps = raw.clone();
    for i in 0..n {
        for j in 0..n {
            let norm = (0..COILS).map(|c| raw[[c, i, j]].norm_sqr()).sum::<f64>().sqrt();
            for c in 0..COILS {
                maps[[c, i, j]] = raw[[c, i, j]] / norm;
            }
        }
    }
    maps
}

/// The position of pixel `(i, j)` in the field of view, as `SheppLogan` places it: `y` from 1 (top row) to −1.
fn pixel_centre(n: usize, i: usize, j: usize) -> (f64, f64) {
    let y = (n as f64 - (2 * i + 1) as f64) / n as f64;
    let x = ((2 * j + 1) as f64 - n as f64) / n as f64;
    (y, x)
}

/// The centred 2-D DFT of every `[n, n]` slice, `fftshift(fft2(ifftshift(x)))` with numpy's default scaling
/// (none forward), computed in float64.
fn centred_fft2(slices: &mut Array3<Complex64>) {
    let n = slices.shape()[1];
    let fft = FftPlanner::new().plan_fft_forward(n);
    for mut slice in slices.outer_iter_mut() {
        let mut shifted = Array2::from_shape_fn((n, n), |(i, j)| slice[[(i + n / 2) % n, (j + n / 2) % n]]);
        for mut row in shifted.rows_mut() {
            let mut line: Vec<Complex64> = row.to_vec();
            fft.process(&mut line);
            row.assign(&ndarray::Array1::from(line));
        }
        for mut column in shifted.columns_mut() {
            let mut line: Vec<Complex64> = column.to_vec();
            fft.process(&mut line);
            column.assign(&ndarray::Array1::from(line));
        }
        for i in 0..n {
            for j in 0..n {
                slice[[(i + n / 2) % n, (j + n / 2) % n]] = shifted[[i, j]];
            }
        }
    }
}

/// Fully sampled multi-coil k-space of the 64² phantom, the coil maps, and a sampling mask.
fn simulate_kspace() -> cliper::Result<(ArrayD<Complex32>, ArrayD<Complex32>, ArrayD<f32>)> {
    let n = KSPACE;
    let phantom = SheppLogan::<f32>::reference(&[n, n])?;
    let maps = coil_maps(n);
    let mut coil_images = Array3::from_shape_fn((COILS, n, n), |(c, i, j)| maps[[c, i, j]] * phantom[i * n + j]);
    centred_fft2(&mut coil_images);
    // Cartesian 2× undersampling along the second (phase-encoding) axis with the 16 central lines kept: a
    // pattern for masking experiments; the k-space itself is complete.
    let mask = Array2::from_shape_fn((n, n), |(_, j)| if j % 2 == 0 || j.abs_diff(n / 2) < 8 { 1.0f32 } else { 0.0 });
    let to_c32 = |z: &Complex64| Complex32::new(z.re as f32, z.im as f32);
    Ok((coil_images.map(to_c32).into_dyn(), maps.map(to_c32).into_dyn(), mask.into_dyn()))
}

/// Two matrices for `examples/mat_pipeline.rs`: `A` (64 × 48) and `B` (48 × 64) with entries uniform in
/// [−0.25, 0.25) from a fixed linear congruential sequence (Knuth's MMIX constants); `A·B` is 64 × 64 with
/// spectral radius 1.18 (numpy.linalg.eigvals), so its powers neither vanish nor overflow quickly.
fn matrices() -> (ArrayD<f64>, ArrayD<f64>) {
    let mut state: u64 = 2026;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let a = ArrayD::from_shape_simple_fn(IxDyn(&[64, 48]), &mut next) / 2.0;
    let b = ArrayD::from_shape_simple_fn(IxDyn(&[48, 64]), &mut next) / 2.0;
    (a, b)
}
