//! DICOM files, multi-frame objects and series (a folder, or a list of files) with their geometry. (Being
//! written: issue 24.)

use super::file::Image;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// What `cliper info` shows of a DICOM input beside its array and geometry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DicomInfo {
    /// Modality (CT, MR, …).
    pub modality: String,
    /// SeriesInstanceUID.
    pub series_uid: String,
    /// SeriesDescription, when present.
    pub series_description: String,
    /// The transfer syntax's name (of the first file).
    pub transfer_syntax: String,
    /// The files read, in slice order.
    pub files: Vec<PathBuf>,
}

/// A DICOM image or series: the array (rescaled), its geometry, and what the files said about it.
#[derive(Clone, Debug, PartialEq)]
pub struct Dicom {
    /// The pixels as an image, with geometry.
    pub image: Image,
    /// The series' tags.
    pub info: DicomInfo,
}

/// Reads a DICOM file, or a folder holding one series.
pub fn read_dicom(path: impl AsRef<Path>) -> Result<Dicom> {
    Err(Error::Format { path: path.as_ref().to_path_buf(), reason: "DICOM reading is not written yet".into() })
}

/// Reads the files of one series, in any order.
pub fn read_dicom_series(files: &[PathBuf]) -> Result<Dicom> {
    Err(Error::Format {
        path: files.first().cloned().unwrap_or_default(),
        reason: "DICOM reading is not written yet".into(),
    })
}

/// Reads one DICOM part 10 file's bytes in memory; errors name the source `<memory>`.
pub fn decode_dicom(bytes: &[u8]) -> Result<Dicom> {
    let _ = bytes;
    Err(Error::Format { path: super::source::MEMORY.into(), reason: "DICOM reading is not written yet".into() })
}
