//! Any file by extension ([`read_file`], [`write_file`]) and explicit element-type conversion
//! ([`HostArray::cast`]) for saving in another type than the data's.

use super::cfl::{read_cfl, write_cfl};
use super::dicom::read_dicom;
use super::host_array::{Dtype, HostArray, each_variant, show_number};
use super::image::Image;
use super::mat::{read_mat, write_mat};
use super::metaimage::read_metaimage;
use super::nifti::{read_nifti, write_nifti, write_nifti_image};
use super::npy::{read_npy, write_npy};
use super::nrrd::read_nrrd;
use super::png::{read_png, write_png};
use super::source::{extension, extension_to_read, unsupported_extension};
use super::tiff::{TiffOptions, read_tiff, read_tiff_image, write_tiff, write_tiff_with};
use crate::error::{Error, Result};
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};
use std::path::Path;

/// How values become another type's values in [`HostArray::cast`] (and PNG samples in
/// [`crate::data::XData::save_png`]).
///
/// ```
/// use cliper::{Dtype, HostArray, Scale};
/// let x = HostArray::F32(ndarray::ArrayD::from_shape_vec(vec![3], vec![-1.0f32, 0.0, 1.0]).unwrap());
/// let bytes = x.cast(Dtype::U8, Scale::MinMax, false)?; // −1 → 0, 1 → 255
/// assert_eq!(bytes, HostArray::U8(ndarray::ArrayD::from_shape_vec(vec![3], vec![0u8, 128, 255]).unwrap()));
/// assert!(x.cast(Dtype::U8, Scale::Raw, false).is_err()); // −1 does not fit a u8
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scale {
    /// Values stay exactly as they are: a value the type cannot hold — a fraction for an integer type, or one
    /// outside its range — is an error naming how many and the first, unless clipping was asked for (which
    /// clamps the range, never rounds). Floats saved to PNG or an integer type must therefore be whole numbers.
    #[default]
    Raw,
    /// As `Raw`, but values are first rounded to the nearest integer (half away from zero) for integer types.
    Round,
    /// The array's minimum maps to the type's lowest value and its maximum to the highest (0 and 1 for
    /// floats); a constant array maps to the lowest.
    MinMax,
}

impl std::str::FromStr for Scale {
    type Err = Error;
    /// `raw`, `round` or `minmax` (the pipeline-file and command-line names).
    ///
    /// ```
    /// assert_eq!("minmax".parse::<cliper::Scale>()?, cliper::Scale::MinMax);
    /// assert!("linear".parse::<cliper::Scale>().is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    fn from_str(name: &str) -> Result<Scale> {
        match name {
            "raw" => Ok(Scale::Raw),
            "round" => Ok(Scale::Round),
            "minmax" => Ok(Scale::MinMax),
            other => Err(Error::invalid("scale", format!("`{other}` is not raw, round or minmax"))),
        }
    }
}

impl Scale {
    /// The names [`Scale::from_str`](std::str::FromStr) accepts.
    pub const NAMES: [&str; 3] = ["raw", "round", "minmax"];
}

/// Reads the array in a file, choosing the format by extension: `.npy`, `.cfl`/`.hdr`, `.png`, `.tif`/`.tiff`,
/// or `.mat` holding one numeric variable (see [`crate::read_mat_variable`] for one of several). The array keeps
/// the file's element type.
///
/// ```
/// use cliper::{Dtype, read_file};
/// let png = read_file(concat!(env!("CARGO_MANIFEST_DIR"), "/data/phantom_256.png"))?;
/// assert_eq!((png.dtype(), png.shape()), (Dtype::U16, &[256, 256][..]));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_file(path: impl AsRef<Path>) -> Result<HostArray> {
    let path = path.as_ref();
    match extension_to_read(path)?.as_str() {
        "npy" => read_npy(path),
        "cfl" | "hdr" => read_cfl(path),
        "png" => read_png(path),
        "tif" | "tiff" => read_tiff(path),
        "nii" | "nii.gz" => read_nifti(path).map(|image| image.array),
        "nrrd" | "nhdr" => read_nrrd(path).map(|image| image.array),
        "mha" | "mhd" => read_metaimage(path).map(|image| image.array),
        "dcm" | "dicom-series" => read_dicom(path).map(|dicom| dicom.image.array),
        "mat" => {
            let mut vars = read_mat(path)?;
            if vars.len() != 1 {
                let names: Vec<&str> = vars.iter().map(|(n, _)| n.as_str()).collect();
                return Err(Error::Format {
                    path: path.to_path_buf(),
                    reason: format!(
                        "the file holds {} numeric variables {names:?}; name one (XData::load_mat, or FILE.mat:NAME \
                         on the command line)",
                        names.len()
                    ),
                });
            }
            Ok(vars.remove(0).1)
        }
        other => Err(unsupported_extension(path, other)),
    }
}

/// [`read_file`], also saying whether the file holds a colour image (a PNG or TIFF of grey + alpha, RGB or
/// RGBA samples); other formats hold plain arrays.
pub fn read_image(path: impl AsRef<Path>) -> Result<Image> {
    let path = path.as_ref();
    match extension_to_read(path)?.as_str() {
        "tif" | "tiff" => {
            read_tiff_image(path).map(|(array, colour)| Image { array, colour, geometry: None, scaling: None })
        }
        "nii" | "nii.gz" => read_nifti(path),
        "nrrd" | "nhdr" => read_nrrd(path),
        "mha" | "mhd" => read_metaimage(path),
        "dcm" | "dicom-series" => read_dicom(path).map(|dicom| dicom.image),
        ext => {
            let array = read_file(path)?;
            // A PNG holds one image: a third axis can only be its channels.
            let colour = ext == "png" && array.shape().len() == 3;
            Ok(Image { array, colour, geometry: None, scaling: None })
        }
    }
}

/// [`write_image`], giving the element type the file holds: the array's, or for a NIfTI that stores the integers
/// behind the values under [`Image::scaling`], the stored type.
#[cfg(feature = "chain")]
pub(crate) fn write_image_holding(path: &Path, image: &Image) -> Result<Dtype> {
    let ext = extension(path)?;
    if ext == "nii" || ext == "nii.gz" {
        return write_nifti_image(path, image);
    }
    write_image(path, image).map(|()| image.array.dtype())
}

/// Writes an image as [`write_file`] does, with its colour channels as colour: a colour `[C, H, W]` becomes one
/// colour PNG or TIFF page (`[pages, C, H, W]` colour TIFF pages); a grey stack `[N, H, W]` goes to TIFF as grey
/// pages and cannot go to a PNG (one image): it is refused with its shape, rather than taken for channels.
///
/// ```
/// use cliper::{HostArray, Image, write_image};
/// let path = std::env::temp_dir().join(format!("cliper-doc-image-{}.png", std::process::id()));
/// let stack = HostArray::U8(ndarray::Array3::zeros((3, 4, 5)).into_dyn());
/// let err = write_image(&path, &Image { array: stack.clone(), colour: false, geometry: None, scaling: None }).unwrap_err().to_string();
/// assert!(err.contains("[3, 4, 5]"), "{err}");
/// write_image(&path, &Image { array: stack, colour: true, geometry: None, scaling: None })?; // an RGB image
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_image(path: impl AsRef<Path>, image: &Image) -> Result<()> {
    let path = path.as_ref();
    let shape = image.array.shape();
    let ext = extension(path)?;
    if ext == "tif" || ext == "tiff" {
        return write_tiff_with(path, &image.array, TiffOptions { colour: image.colour, ..TiffOptions::default() });
    }
    if ext == "nii" || ext == "nii.gz" {
        return write_nifti_image(path, image).map(drop);
    }
    if ext == "png" && !image.colour && shape.len() != 2 {
        return Err(Error::Format {
            path: path.to_path_buf(),
            reason: format!(
                "a PNG holds one image; shape {shape:?} is not one grey [H, W] image (nor a colour image read from \
                 a colour file): save it as TIFF or NPY, or reduce it first"
            ),
        });
    }
    write_file(path, &image.array)
}

/// Writes an array in its own element type to a file whose format follows the extension, atomically: `.npy`
/// (every type), `.cfl`/`.hdr` (complex64), `.png` (u8 or u16), `.tif`/`.tiff` (grey pages of every type,
/// uncompressed; [`crate::write_tiff_with`] writes colour), `.mat` (every type, one compressed variable named
/// `x`). A type the format cannot hold is an error that names both; [`HostArray::cast`] converts first.
///
/// ```
/// use cliper::{Dtype, HostArray, Scale, read_file, write_file};
/// let path = std::env::temp_dir().join(format!("cliper-doc-write-file-{}.png", std::process::id()));
/// let x = HostArray::F64(ndarray::arr2(&[[0.0, 0.5], [1.0, 2.0]]).into_dyn());
/// assert!(write_file(&path, &x).is_err()); // PNG holds u8/u16 samples
/// write_file(&path, &x.cast(Dtype::U8, Scale::MinMax, false)?)?;
/// assert_eq!(read_file(&path)?, HostArray::U8(ndarray::arr2(&[[0u8, 64], [128, 255]]).into_dyn()));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_file(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    let path = path.as_ref();
    match extension(path)?.as_str() {
        "npy" => write_npy(path, array),
        "cfl" | "hdr" => write_cfl(path, array),
        "png" => write_png(path, array),
        "tif" | "tiff" => write_tiff(path, array),
        "mat" => write_mat(path, &[("x", array)], true),
        "nii" | "nii.gz" => write_nifti(path, array, false, None),
        other => Err(unsupported_extension(path, other)),
    }
}

/// The range of values an integer type holds, or `None` for floats and complex.
fn integer_range(dtype: Dtype) -> Option<(f64, f64)> {
    Some(match dtype {
        Dtype::U8 => (0.0, u8::MAX as f64),
        Dtype::U16 => (0.0, u16::MAX as f64),
        Dtype::U32 => (0.0, u32::MAX as f64),
        Dtype::U64 => (0.0, u64::MAX as f64),
        Dtype::I8 => (i8::MIN as f64, i8::MAX as f64),
        Dtype::I16 => (i16::MIN as f64, i16::MAX as f64),
        Dtype::I32 => (i32::MIN as f64, i32::MAX as f64),
        Dtype::I64 => (i64::MIN as f64, i64::MAX as f64),
        Dtype::F32 | Dtype::F64 | Dtype::C32 | Dtype::C64 => return None,
    })
}

impl HostArray {
    /// Host bytes [`HostArray::cast`] to `dtype` takes: the values as complex f64 and up to four f64 copies on
    /// the way (48 bytes per element), beside the result.
    pub(crate) fn cast_bytes(&self, dtype: Dtype) -> u64 {
        (self.shape().iter().product::<usize>() as u64).saturating_mul(48 + dtype.size() as u64)
    }

    /// The values converted to `dtype`, explicitly (unlike loading, which refuses any change):
    ///
    /// - to an integer type: `Scale::Raw` keeps values exactly — a fraction is an error naming how many and the
    ///   first (element index and value), so float results never become integers silently; `Scale::Round`
    ///   rounds to the nearest integer first; values outside the type's range are an error unless `clip`
    ///   clamps them; `Scale::MinMax` stretches the array's range onto the type's;
    /// - to a float type: `Raw`/`Round` give the nearest value of the type (f64 → f32 loses digits when asked
    ///   for), `MinMax` maps onto [0, 1];
    /// - to a complex type: real values get a zero imaginary part; complex → real is refused (take the
    ///   magnitude or real part first).
    ///
    /// NaN cannot become an integer (an error naming the element); `MinMax` ignores nothing, so NaN or ±∞ there
    /// is an error too.
    ///
    /// ```
    /// use cliper::{Dtype, HostArray, Scale};
    /// let x = HostArray::F32(ndarray::arr1(&[-1.0f32, 0.4, 2.6, 300.0]).into_dyn());
    /// assert_eq!(x.cast(Dtype::U8, Scale::Round, true)?, HostArray::U8(ndarray::arr1(&[0u8, 0, 3, 255]).into_dyn()));
    /// let err = x.cast(Dtype::U8, Scale::Raw, true).unwrap_err().to_string();
    /// assert!(err.contains("2 value(s) are not whole") && err.contains("0.4"), "{err}");
    /// let err = x.cast(Dtype::U8, Scale::Round, false).unwrap_err().to_string();
    /// assert!(err.contains("2 value(s)") && err.contains("-1"), "{err}");
    /// assert_eq!(x.cast(Dtype::I16, Scale::MinMax, false)?.shape(), &[4]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn cast(&self, dtype: Dtype, scale: Scale, clip: bool) -> Result<HostArray> {
        let refuse = |reason: String| Error::InvalidArgument { op: format!("converting to {}", dtype.name()), reason };
        let from_complex = matches!(self, HostArray::C32(_) | HostArray::C64(_));
        let to_complex = matches!(dtype, Dtype::C32 | Dtype::C64);
        if from_complex && !to_complex {
            return Err(refuse(format!(
                "{} data is complex; take its magnitude or real part before converting to a real type",
                self.dtype().name()
            )));
        }
        let what = format!("converting {:?} {}", self.shape(), self.dtype().name());
        super::host_budget::check_host_memory_text(&what, self.cast_bytes(dtype)).map_err(refuse)?;
        let values: ArrayD<Complex64> =
            each_variant!(self, a => a.mapv(|v| super::host_array::Widen::as_complex64(v).0));
        let single = matches!(self, HostArray::F32(_) | HostArray::C32(_));
        let shape = values.raw_dim();
        if to_complex {
            let out = match scale {
                Scale::Raw | Scale::Round => values,
                Scale::MinMax => {
                    return Err(refuse("min–max scaling is for real values; complex data converts raw".into()));
                }
            };
            return Ok(match dtype {
                Dtype::C32 => HostArray::C32(out.mapv(|z| Complex32::new(z.re as f32, z.im as f32))),
                _ => HostArray::C64(out),
            });
        }
        let real: Vec<f64> = values.iter().map(|z| z.re).collect();
        let range = integer_range(dtype);
        if let Some(i) = real.iter().position(|v| v.is_nan())
            && (range.is_some() || scale == Scale::MinMax)
        {
            return Err(refuse(format!("element {i} is NaN, which has no place in {}", dtype.name())));
        }
        if scale == Scale::MinMax
            && let Some((i, v)) = real.iter().enumerate().find(|(_, v)| v.is_infinite())
        {
            return Err(refuse(format!("element {i} is {v}; min–max scaling needs finite values")));
        }
        let (lo, hi) = range.unwrap_or((0.0, 1.0));
        let scaled: Vec<f64> = match scale {
            Scale::MinMax => {
                let (min, max) =
                    real.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
                let span = max - min;
                real.iter().map(|&v| if span > 0.0 { lo + (v - min) / span * (hi - lo) } else { lo }).collect()
            }
            Scale::Raw | Scale::Round => real,
        };
        if scale == Scale::Raw && range.is_some() {
            let mut fractions = scaled.iter().enumerate().filter(|(_, v)| v.is_finite() && v.fract() != 0.0);
            if let Some((first, value)) = fractions.next() {
                return Err(refuse(format!(
                    "{} value(s) are not whole numbers, the first {} (element {first})",
                    1 + fractions.count(),
                    show_number(*value, single),
                )));
            }
        }
        let rounded: Vec<f64> =
            if range.is_some() { scaled.iter().map(|v| v.round()).collect() } else { scaled.clone() };
        if range.is_some() && !clip {
            let mut outside = rounded.iter().zip(&scaled).enumerate().filter(|(_, (r, _))| !(lo..=hi).contains(*r));
            if let Some((first, (_, value))) = outside.next() {
                return Err(refuse(format!(
                    "{} value(s) fall outside {lo}..={hi}, the first {} (element {first})",
                    1 + outside.count(),
                    show_number(*value, single),
                )));
            }
        }
        let clamped = rounded.into_iter().map(|v| if range.is_some() { v.clamp(lo, hi) } else { v });
        let array = |values: Vec<f64>| ArrayD::from_shape_vec(shape.clone(), values).unwrap_or_default();
        let values: Vec<f64> = clamped.collect();
        // In range and whole: the `as` conversions below are exact (u64/i64 saturate at their ends).
        Ok(match dtype {
            Dtype::U8 => HostArray::U8(array(values).mapv(|v| v as u8)),
            Dtype::U16 => HostArray::U16(array(values).mapv(|v| v as u16)),
            Dtype::U32 => HostArray::U32(array(values).mapv(|v| v as u32)),
            Dtype::U64 => HostArray::U64(array(values).mapv(|v| v as u64)),
            Dtype::I8 => HostArray::I8(array(values).mapv(|v| v as i8)),
            Dtype::I16 => HostArray::I16(array(values).mapv(|v| v as i16)),
            Dtype::I32 => HostArray::I32(array(values).mapv(|v| v as i32)),
            Dtype::I64 => HostArray::I64(array(values).mapv(|v| v as i64)),
            Dtype::F32 => HostArray::F32(array(values).mapv(|v| v as f32)),
            Dtype::F64 | Dtype::C32 | Dtype::C64 => HostArray::F64(array(values)),
        })
    }
}
