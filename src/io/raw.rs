//! RAW files: the elements only, row-major, with the shape, type and byte order given by the caller.

use super::host_array::{Dtype, HostArray, each_variant};
use super::host_budget::check_host_memory;
use super::sample::{decode, encode};
use super::save::write_atomically;
use super::source::{MEMORY, data_bytes, open_sized};
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};
use std::io::{Read, Write};
use std::path::Path;

/// Byte order of a RAW file.
///
/// ```
/// use cliper::{Dtype, Endian, RawFormat};
/// let format = RawFormat { shape: vec![2], dtype: Dtype::U16, endian: Endian::Big };
/// let a = cliper::decode_raw(&[0x01, 0x00, 0x00, 0x02], &format)?;
/// assert_eq!(a.to_elements::<f64>("bytes")?.into_raw_vec_and_offset().0, vec![256.0, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Endian {
    /// Least significant byte first (x86, ARM, most files).
    #[default]
    Little,
    /// Most significant byte first.
    Big,
}

/// What a RAW file holds: row-major elements of `dtype` in `endian` byte order, `shape` given by the caller.
///
/// ```
/// use cliper::{Dtype, Endian, RawFormat};
/// let format = RawFormat { shape: vec![2, 2], dtype: Dtype::F32, endian: Endian::Little };
/// let bytes: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
/// assert_eq!(cliper::decode_raw(&bytes, &format)?.shape(), &[2, 2]);
/// assert!(cliper::decode_raw(&bytes[..12], &format).is_err()); // 12 bytes cannot hold 2×2 f32
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawFormat {
    /// The array's shape (row-major: the last axis varies fastest in the file).
    pub shape: Vec<usize>,
    /// The element type.
    pub dtype: Dtype,
    /// The byte order.
    pub endian: Endian,
}

/// Reads a RAW file. Its size must be exactly `shape`'s element count times the element size.
///
/// ```
/// use cliper::{Dtype, Endian, HostArray, RawFormat, read_raw, write_raw};
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.raw", std::process::id()));
/// let a = HostArray::U16(ndarray::arr1(&[1u16, 258]).into_dyn());
/// write_raw(&path, &a, Endian::Big)?;
/// assert_eq!(std::fs::read(&path).unwrap(), [0, 1, 1, 2]);
/// let format = RawFormat { shape: vec![2], dtype: Dtype::U16, endian: Endian::Big };
/// assert_eq!(read_raw(&path, &format)?, a);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_raw(path: impl AsRef<Path>, format: &RawFormat) -> Result<HostArray> {
    let path = path.as_ref();
    let (mut file, size) = open_sized(path)?;
    let bytes = format.data_bytes(size, path)?;
    // The file's bytes and the array decoded from them are held together.
    let what = format!("reading the RAW data of shape {:?} of {} whole", format.shape, format.dtype.name());
    check_host_memory(path, &what, (bytes as u64).saturating_mul(2))?;
    let mut data = vec![0u8; bytes];
    file.read_exact(&mut data).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    format.array(&data, path)
}

/// [`read_raw`] on bytes in memory; errors name the source as `<memory>`.
///
/// ```
/// use cliper::{Dtype, Endian, RawFormat, decode_raw};
/// let format = RawFormat { shape: vec![1, 2], dtype: Dtype::I16, endian: Endian::Little };
/// assert_eq!(decode_raw(&[255, 255, 7, 0], &format)?.shape(), &[1, 2]);
/// let huge = RawFormat { shape: vec![1 << 40], ..format };
/// assert!(decode_raw(&[0; 4], &huge).unwrap_err().to_string().contains("needs 2199023255552"));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn decode_raw(bytes: &[u8], format: &RawFormat) -> Result<HostArray> {
    let source = Path::new(MEMORY);
    format.data_bytes(bytes.len() as u64, source)?;
    format.array(bytes, source)
}

impl RawFormat {
    /// The array `bytes` hold — exactly the bytes the shape and type need — with errors naming `path` (readers
    /// of formats whose data is RAW after a header of their own).
    pub(crate) fn decode_named(&self, bytes: &[u8], path: &Path) -> Result<HostArray> {
        self.data_bytes(bytes.len() as u64, path)?;
        self.array(bytes, path)
    }

    /// The bytes the shape and type need, which must be the `size` the file has.
    fn data_bytes(&self, size: u64, path: &Path) -> Result<usize> {
        let what = format!("shape {:?} of {}", self.shape, self.dtype.name());
        data_bytes(&self.shape, self.dtype.size(), size, path, &what)
    }

    /// The array the (size-checked) bytes hold.
    fn array(&self, data: &[u8], path: &Path) -> Result<HostArray> {
        let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
        let shape = IxDyn(&self.shape);
        let little = self.endian == Endian::Little;
        macro_rules! decoded {
            ($variant:ident) => {
                HostArray::$variant(
                    ArrayD::from_shape_vec(shape, decode(data, little)).map_err(|e| bad(e.to_string()))?,
                )
            };
        }
        Ok(match self.dtype {
            Dtype::U8 => decoded!(U8),
            Dtype::U16 => decoded!(U16),
            Dtype::U32 => decoded!(U32),
            Dtype::U64 => decoded!(U64),
            Dtype::I8 => decoded!(I8),
            Dtype::I16 => decoded!(I16),
            Dtype::I32 => decoded!(I32),
            Dtype::I64 => decoded!(I64),
            Dtype::F32 => decoded!(F32),
            Dtype::F64 => decoded!(F64),
            Dtype::C32 => decoded!(C32),
            Dtype::C64 => decoded!(C64),
        })
    }
}

/// Writes the elements of `array` row-major in `endian` byte order (complex: real then imaginary part),
/// atomically. The shape and type are not stored: keep them (or use NPY).
pub fn write_raw(path: impl AsRef<Path>, array: &HostArray, endian: Endian) -> Result<()> {
    let bytes = each_variant!(array, a => encode(a.iter(), endian == Endian::Little));
    write_atomically(path.as_ref(), |out| out.write_all(&bytes).map_err(|e| e.to_string()))
}
