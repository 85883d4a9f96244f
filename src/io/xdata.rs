//! Loading and saving [`XData`] arrays by file extension.

use super::{
    Endian, HostArray, RawFormat, extension, read_cfl, read_npy, read_raw, unsupported_extension, write_cfl, write_npy,
    write_raw,
};
use crate::app::ClApp;
use crate::data::{Element, XData};
use crate::error::Result;
use ndarray::ArrayD;
use num_complex::Complex32;
use std::path::Path;

/// The host copy of a device array, in the file element type matching `T`.
fn host_of<T: Element>(a: ArrayD<T>) -> HostArray {
    // `to_c64` is exact for every element type, so narrowing back to T's own width changes nothing.
    match (T::IS_COMPLEX, T::IS_DOUBLE) {
        (false, false) => HostArray::F32(a.mapv(|v| v.to_c64().re as f32)),
        (false, true) => HostArray::F64(a.mapv(|v| v.to_c64().re)),
        (true, false) => HostArray::C32(a.mapv(|v| {
            let z = v.to_c64();
            Complex32::new(z.re as f32, z.im as f32)
        })),
        (true, true) => HostArray::C64(a.mapv(|v| v.to_c64())),
    }
}

impl<T: Element> XData<T> {
    /// Loads an array from a file, choosing the format by extension (`.npy`, `.cfl`/`.hdr`), converting its elements
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
        let host = match extension(path)?.as_str() {
            "npy" => read_npy(path)?,
            "cfl" | "hdr" => read_cfl(path)?,
            other => return Err(unsupported_extension(path, other)),
        };
        XData::from_ndarray(app, &host.to_elements::<T>(path)?)
    }

    /// Saves the array (as its view looks: shape and order of this view) to a file whose format follows the
    /// extension (`.npy`, `.cfl`/`.hdr`: complex64, so complex arrays only), atomically: the data goes to a temporary file that is renamed over `path`.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        match extension(path)?.as_str() {
            "npy" => write_npy(path, &host_of(self.to_ndarray()?)),
            "cfl" | "hdr" => write_cfl(path, &host_of(self.to_ndarray()?)),
            other => Err(unsupported_extension(path, other)),
        }
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

    /// Saves the elements row-major as `T` in `endian` byte order, without a header, atomically.
    pub fn save_raw(&self, path: impl AsRef<Path>, endian: Endian) -> Result<()> {
        write_raw(path, &host_of(self.to_ndarray()?), endian)
    }
}
