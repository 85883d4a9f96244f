//! A CT series from DICOM to a smoothed NIfTI volume: the series in `data/ct_series` is read slice by slice
//! (sorted by position along the slice normal, rescaled to Hounsfield units), smoothed on the device by a
//! Gaussian of 1.5 mm in every direction — a σ in voxels of its own per axis, the slices being 2.5 mm apart and
//! the pixels 0.8 mm — and saved with the series' geometry, so that the result overlays the scan in a viewer.
//!
//! `cargo run --release --example ct_series [-- SERIES_DIR OUTPUT.nii.gz]` (default `data/ct_series` and
//! `out/ct_smooth.nii.gz`). The command line does the same with
//! `cliper convolve data/ct_series out/ct_smooth.nii.gz --kernel gaussian:1.5mm --rank 3`.

use cliper::prelude::*;
use cliper::{read_dicom, write_nifti};

fn main() -> cliper::Result<()> {
    let mut args = std::env::args().skip(1);
    let input = args.next().unwrap_or_else(|| "data/ct_series".into());
    let output = args.next().unwrap_or_else(|| "out/ct_smooth.nii.gz".into());

    let series = read_dicom(&input)?;
    let geometry =
        series.image.geometry.ok_or_else(|| Error::invalid("ct_series", format!("{input} has no geometry")))?;
    let shape = series.image.array.shape().to_vec();
    println!(
        "{input}: {} series \"{}\", {} files, {:?} {} ({}), voxels {:?} mm, axes {}",
        series.info.modality,
        series.info.series_description,
        series.info.files.len(),
        shape,
        series.image.array.dtype().name(),
        series.info.transfer_syntax,
        geometry.spacing_mm(),
        geometry.axis_codes(),
    );

    // Hounsfield units as float32 on the device (exact: CT values are 16-bit integers).
    let app = ClApp::new()?;
    let hu = series.image.array.to_elements::<f32>(&input)?;
    let volume = XData::from_ndarray(&app, &hu)?;
    let sigma = geometry.in_voxels(1.5);
    let gaussian = Filter::<f32>::gaussian_axes(&sigma)?;
    let smooth = Convolution::apply(&volume, &gaussian, ConvParams::default().mode(ConvMode::Correlation))?;
    println!(
        "σ = 1.5 mm is {sigma:.3?} voxels (slice, row, column): a {:?} filter on {}",
        gaussian.shape(),
        app.device().name
    );

    let result = smooth.to_ndarray()?;
    let (lo, hi) = result.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    if let Some(dir) = std::path::Path::new(&output).parent() {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    }
    write_nifti(&output, &HostArray::F32(result), false, Some(&geometry))?;
    println!("{output}: {shape:?} f32, {lo:.1} to {hi:.1} HU, the series' affine");
    Ok(())
}
