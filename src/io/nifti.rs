//! NIfTI-1 and NIfTI-2 volumes (`.nii`, `.nii.gz`) with their geometry. (Being written: issue 24.)

use super::file::Image;
use super::geometry::Geometry;
use super::host_array::HostArray;
use crate::error::{Error, Result};
use std::path::Path;

/// Reads a NIfTI-1 or NIfTI-2 file (`.nii` or `.nii.gz`): the array `[…, Z, Y, X]` (nibabel's `(X, Y, Z, …)`
/// reversed, the bytes as they lie) with its geometry.
pub fn read_nifti(path: impl AsRef<Path>) -> Result<Image> {
    Err(Error::Format { path: path.as_ref().to_path_buf(), reason: "NIfTI reading is not written yet".into() })
}

/// Reads NIfTI bytes in memory (gzipped or not); errors name the source `<memory>`.
pub fn decode_nifti(bytes: &[u8]) -> Result<Image> {
    let _ = bytes;
    Err(Error::Format { path: super::source::MEMORY.into(), reason: "NIfTI reading is not written yet".into() })
}

/// Writes `array` as NIfTI-1 (gzipped for `.nii.gz`) with `geometry` as its sform and qform (nibabel's default
/// affine when `None`).
pub fn write_nifti(path: impl AsRef<Path>, array: &HostArray, colour: bool, geometry: Option<&Geometry>) -> Result<()> {
    let _ = (array, colour, geometry);
    Err(Error::Format { path: path.as_ref().to_path_buf(), reason: "NIfTI writing is not written yet".into() })
}
