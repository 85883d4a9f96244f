//! Reading and writing arrays in files: the element types files hold ([`Dtype`], [`HostArray`]), lossless
//! conversion to a device element type, and saves that never leave a half-written file.
//!
//! Formats so far: NPY (numpy, through `ndarray-npy`), CFL (BART), PNG (`png`), TIFF (`tiff`), MAT level 5 (our
//! own reader and writer) and RAW (headerless, with an explicit shape, type and byte order).
//! [`crate::data::XData::load`] / [`crate::data::XData::save`] choose by extension.

mod axis_order;
mod cfl;
mod dicom;
mod fast_cast;
mod file;
mod geometry;
mod gzip;
mod host_array;
mod host_budget;
mod image;
mod inflate;
mod kdata;
mod mat;
mod metaimage;
#[cfg(feature = "hdf5")]
mod mri_h5;
mod nifti;
mod npy;
mod nrrd;
mod png;
mod positioned;
mod raw;
mod rescale;
mod sample;
mod save;
mod slabs;
mod source;
mod table;
mod tiff;
mod volume_header;
mod xdata;

#[cfg(feature = "chain")]
pub(crate) use cfl::is_whole_pair;
pub use cfl::{decode_cfl, read_cfl, write_cfl};
pub use dicom::{
    Dicom, DicomInfo, DicomSeriesOptions, decode_dicom, read_dicom, read_dicom_series, write_dicom_series,
};
#[cfg(feature = "chain")]
pub(crate) use fast_cast::{cast_exact, cast_exact_rows, round_to_f32};
#[cfg(feature = "chain")]
pub(crate) use file::write_image_holding;
pub use file::{Scale, read_file, read_image, write_file, write_image};
pub use geometry::{Geometry, SpaceUnit};
pub use host_array::{Dtype, HostArray, show_number, show_value};
pub use host_budget::{HOST_MEMORY_LIMIT_ENV, HostBudget};
pub(crate) use host_budget::{check_host_memory, check_host_memory_text};
pub use image::Image;
pub use kdata::{KSpaceMat, images_to_bart_layout};
pub use mat::{decode_mat, read_mat, read_mat_variable, write_mat, write_mat_variable};
pub use metaimage::{decode_metaimage, read_metaimage};
#[cfg(feature = "hdf5")]
pub use mri_h5::{EncodingSpace, MriFormat, MriHeader, MriRaw, read_mri_h5};
pub use nifti::{decode_nifti, nifti_scale, read_nifti, write_nifti};
pub use npy::{decode_npy, read_npy, write_npy};
pub use nrrd::{decode_nrrd, read_nrrd};
pub use png::{decode_png, read_png, write_png};
pub use positioned::MAPPED_WRITES_ENV;
pub use raw::{Endian, RawFormat, decode_raw, read_raw, write_raw};
pub use rescale::Scaling;
#[cfg(feature = "chain")]
pub(crate) use save::sweep_once;
pub use save::{abandon_saves, remove_stale_temporaries};
pub use slabs::{SlabFile, SlabWriter};
pub use source::is_dicom_file;
pub use table::Table;
pub use tiff::{TiffCompression, TiffOptions, decode_tiff, read_tiff, write_tiff, write_tiff_with};
pub use volume_header::allow_data_outside;
pub use xdata::{PngDepth, PngOptions};
