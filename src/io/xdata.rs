//! Loading and saving [`XData`] arrays by file extension.

use super::file::{Scale, read_file, write_file, write_image};
use super::host_array::{Dtype, HostArray};
use super::image::Image;
use super::mat::read_mat_variable;
use super::raw::{Endian, RawFormat, read_raw, write_raw};
use super::source::extension;
use super::tiff::{TiffOptions, write_tiff_with};
use crate::app::ClApp;
use crate::data::XData;
use crate::element::Element;
use crate::error::Error;
use crate::error::Result;
use std::path::Path;

impl<T: Element> XData<T> {
    /// Loads an array from a file, choosing the format by extension (`.npy`, `.cfl`/`.hdr`, `.png`, `.tif`/`.tiff`, `.mat` with
    /// one variable — see [`XData::load_mat`]), converting its elements
    /// to `T` without loss (see [`HostArray::to_elements`]: integers and floats that `T` holds exactly; complex
    /// data only into complex arrays). Errors name the path and what is wrong.
    ///
    /// ```
    /// use cliper::{ClApp, XData};
    /// let app = ClApp::new()?;
    /// let path = std::env::temp_dir().join(format!("cliper-doc-load-{}.npy", std::process::id()));
    /// let x = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// x.t().save(&path)?;                        // views save as they look
    /// let y = XData::<f64>::load(&app, &path)?;  // f32 values load exactly into f64
    /// assert_eq!((y.shape(), y.to_vec()?), (&[3usize, 2][..], vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]));
    /// assert!(XData::<f32>::load(&app, "missing.npy").unwrap_err().to_string().contains("missing.npy"));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn load(app: &ClApp, path: impl AsRef<Path>) -> Result<XData<T>> {
        let path = path.as_ref();
        XData::from_ndarray(app, &read_file(path)?.to_elements::<T>(path)?)
    }

    /// Saves the array (as its view looks: shape and order of this view) to a file whose format follows the
    /// extension (`.npy`; `.cfl`/`.hdr`: complex64; `.png`: [`PngOptions::default`], see
    /// [`XData::save_png`]; `.tif`/`.tiff`: uncompressed grey pages of `T`, `[H, W]` or `[pages, H, W]`, see
    /// [`XData::save_tiff`] for colour and compression; `.mat`: one compressed variable named `x`, see
    /// [`crate::write_mat`] for several), atomically: the data goes to a temporary file that is renamed over
    /// `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        if extension(path)? == "png" {
            return self.save_png(path, PngOptions::default());
        }
        write_file(path, &HostArray::from_elements(self.to_ndarray()?))
    }

    /// Loads variable `name` of a MAT file with MATLAB's shape and indexing (`x[i][j]` is `A(i+1, j+1)`),
    /// converted to `T` without loss.
    ///
    /// ```
    /// use cliper::{ClApp, XData};
    /// let app = ClApp::new()?;
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/example.mat");
    /// let z = XData::<num_complex::Complex32>::load_mat(&app, path, "Z")?;
    /// assert_eq!(z.shape(), &[2, 2]);
    /// assert!(XData::<f32>::load(&app, path).unwrap_err().to_string().contains("load_mat"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn load_mat(app: &ClApp, path: impl AsRef<Path>, name: &str) -> Result<XData<T>> {
        let path = path.as_ref();
        XData::from_ndarray(app, &read_mat_variable(path, name)?.to_elements::<T>(path)?)
    }

    /// Loads a headerless RAW file with the shape, type and byte order given in `format`, converted to `T`
    /// without loss.
    ///
    /// ```
    /// use cliper::{ClApp, Dtype, Endian, RawFormat, XData};
    /// let app = ClApp::new()?;
    /// let path = std::env::temp_dir().join(format!("cliper-doc-raw-{}.raw", std::process::id()));
    /// std::fs::write(&path, [0u8, 1, 0, 2, 0, 3, 1, 0]).unwrap(); // four big-endian u16
    /// let format = RawFormat { shape: vec![2, 2], dtype: Dtype::U16, endian: Endian::Big };
    /// let x = XData::<f32>::load_raw(&app, &path, &format)?;
    /// assert_eq!(x.to_vec()?, vec![1.0, 2.0, 3.0, 256.0]);
    /// x.save_raw(&path, Endian::Little)?; // f32, little-endian
    /// assert_eq!(std::fs::metadata(&path).unwrap().len(), 16);
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn load_raw(app: &ClApp, path: impl AsRef<Path>, format: &RawFormat) -> Result<XData<T>> {
        let path = path.as_ref();
        XData::from_ndarray(app, &read_raw(path, format)?.to_elements::<T>(path)?)
    }

    /// Saves the array as TIFF pages of `T` (f32, f64, complex64 or complex128), atomically, as `options` say:
    /// grey `[H, W]` or `[pages, H, W]`, or with `colour` set `[C, H, W]` or `[pages, C, H, W]` (C = 2 grey +
    /// alpha, 3 RGB, 4 RGBA; real `T`), uncompressed, LZW or Deflate. `.tif` saves through [`XData::save`] are
    /// uncompressed grey pages.
    ///
    /// ```
    /// use cliper::{ClApp, TiffCompression, TiffOptions, XData};
    /// let app = ClApp::new()?;
    /// let path = std::env::temp_dir().join(format!("cliper-doc-save-tiff-{}.tif", std::process::id()));
    /// let x = XData::from_slice(&app, &[2, 2, 3], &[0.5f32; 12])?;
    /// x.save_tiff(&path, TiffOptions { compression: TiffCompression::Deflate, ..TiffOptions::default() })?;
    /// assert_eq!(XData::<f32>::load(&app, &path)?.to_vec()?, vec![0.5; 12]); // two grey pages
    /// let rgb = XData::from_slice(&app, &[3, 2, 2], &[0.25f32; 12])?;
    /// rgb.save_tiff(&path, TiffOptions { colour: true, ..TiffOptions::default() })?; // one RGB page
    /// assert_eq!(XData::<f32>::load(&app, &path)?.shape(), &[3, 2, 2]);
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn save_tiff(&self, path: impl AsRef<Path>, options: TiffOptions) -> Result<()> {
        write_tiff_with(path, &HostArray::from_elements(self.to_ndarray()?), options)
    }

    /// Saves the elements row-major as `T` in `endian` byte order, without a header, atomically.
    pub fn save_raw(&self, path: impl AsRef<Path>, endian: Endian) -> Result<()> {
        write_raw(path, &HostArray::from_elements(self.to_ndarray()?), endian)
    }
}

/// PNG sample depth.
///
/// ```
/// use cliper::{PngDepth, PngOptions, Scale};
/// let eight = PngOptions { depth: PngDepth::Eight, scale: Scale::MinMax, ..PngOptions::default() };
/// assert_eq!(PngOptions::default().depth, PngDepth::Sixteen);
/// # let _ = eight;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PngDepth {
    /// 0–255.
    Eight,
    /// 0–65535.
    #[default]
    Sixteen,
}

/// How [`XData::save_png`] writes an image: explicit depth and scaling, nothing implied.
///
/// ```
/// use cliper::{ClApp, PngOptions, Scale, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 2], &[0.0f32, 0.25, 0.5, 1.0])?;
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.png", std::process::id()));
/// x.save_png(&path, PngOptions { scale: Scale::MinMax, ..PngOptions::default() })?; // 0 → 0, 1 → 65535
/// let negative = XData::from_slice(&app, &[1], &[-1.0f32])?;
/// assert!(negative.save_png(&path, PngOptions::default()).is_err()); // −1 is no 16-bit sample
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PngOptions {
    /// 8 or 16 bits per sample (default 16).
    pub depth: PngDepth,
    /// Raw values (default) or min–max stretched.
    pub scale: Scale,
    /// Clamp out-of-range raw values instead of refusing them.
    pub clip: bool,
    /// The array is a colour image `[C, H, W]` (C = 1 to 4: grey, grey + alpha, RGB, RGBA, channel first as
    /// [`crate::read_png`] gives them); otherwise it must be one grey `[H, W]` image.
    pub colour: bool,
}

impl<T: Element> XData<T> {
    /// Saves a real array as a PNG, atomically, with explicit depth and scaling: one grey image `[H, W]`, or with
    /// `colour` a colour image `[C, H, W]`. Raw values must be whole numbers within the depth's range (use
    /// [`Scale::Round`] to round, `clip` to clamp, [`Scale::MinMax`] to stretch); otherwise — and for NaN — the
    /// error names the first offending value and how many there are.
    ///
    /// ```
    /// use cliper::{ClApp, PngDepth, PngOptions, Scale, XData};
    /// let app = ClApp::new()?;
    /// let path = std::env::temp_dir().join(format!("cliper-doc-save-{}.png", std::process::id()));
    /// let x = XData::from_slice(&app, &[2, 2], &[0.0f32, 0.5, 1.0, 2.0])?;
    /// let stretched = PngOptions { depth: PngDepth::Eight, scale: Scale::MinMax, ..PngOptions::default() };
    /// x.save_png(&path, stretched)?;
    /// assert_eq!(XData::<f32>::load(&app, &path)?.to_vec()?, vec![0.0, 64.0, 128.0, 255.0]);
    /// let raw8 = PngOptions { depth: PngDepth::Eight, ..PngOptions::default() };
    /// let big = XData::from_slice(&app, &[1, 2], &[3.0f32, 300.0])?;
    /// assert!(big.save_png(&path, raw8).unwrap_err().to_string().contains("300"));
    /// # std::fs::remove_file(&path).ok();
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn save_png(&self, path: impl AsRef<Path>, options: PngOptions) -> Result<()> {
        let path = path.as_ref();
        let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
        if T::IS_COMPLEX {
            return Err(bad(format!(
                "PNG holds real samples; save |x| or the real part of this {} array instead",
                T::NAME
            )));
        }
        let dtype = match options.depth {
            PngDepth::Eight => Dtype::U8,
            PngDepth::Sixteen => Dtype::U16,
        };
        let samples = HostArray::from_elements(self.to_ndarray()?).cast(dtype, options.scale, options.clip).map_err(
            |e| match e {
                Error::InvalidArgument { reason, .. } => bad(reason),
                other => other,
            },
        )?;
        write_image(path, &Image { array: samples, colour: options.colour, geometry: None, scaling: None })
    }
}
