//! RAW files: the elements only, row-major, with the shape, type and byte order given by the caller.

use super::{Dtype, HostArray, each_variant, open, write_atomically};
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};
use std::io::{Read, Write};
use std::path::Path;

/// Byte order of a RAW file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Endian {
    /// Least significant byte first (x86, ARM, most files).
    #[default]
    Little,
    /// Most significant byte first.
    Big,
}

/// What a RAW file holds: row-major elements of `dtype` in `endian` byte order, `shape` given by the caller.
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
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let count = format.shape.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
    let bytes = count.and_then(|n| n.checked_mul(format.dtype.size()));
    let (Some(count), Some(bytes)) = (count, bytes) else {
        return Err(bad(format!("shape {:?} overflows the address space", format.shape)));
    };
    let mut file = open(path)?;
    let size = file.metadata().map_err(|source| Error::Io { path: path.to_path_buf(), source })?.len();
    if size != bytes as u64 {
        return Err(bad(format!(
            "the file has {size} bytes but shape {:?} of {} needs {bytes}",
            format.shape,
            format.dtype.name()
        )));
    }
    let mut data = vec![0u8; bytes];
    file.read_exact(&mut data).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let shape = IxDyn(&format.shape);
    let big = format.endian == Endian::Big;
    macro_rules! decode {
        ($variant:ident, $t:ty) => {{
            let n = std::mem::size_of::<$t>();
            let values: Vec<$t> = data
                .chunks_exact(n)
                .map(|c| {
                    let mut b = [0u8; std::mem::size_of::<$t>()];
                    b.copy_from_slice(c);
                    if big { <$t>::from_be_bytes(b) } else { <$t>::from_le_bytes(b) }
                })
                .collect();
            HostArray::$variant(ArrayD::from_shape_vec(shape, values).map_err(|e| bad(e.to_string()))?)
        }};
    }
    macro_rules! decode_complex {
        ($variant:ident, $c:ident, $t:ty) => {{
            let n = std::mem::size_of::<$t>();
            let parts: Vec<$t> = data
                .chunks_exact(n)
                .map(|c| {
                    let mut b = [0u8; std::mem::size_of::<$t>()];
                    b.copy_from_slice(c);
                    if big { <$t>::from_be_bytes(b) } else { <$t>::from_le_bytes(b) }
                })
                .collect();
            let values: Vec<$c> = parts.chunks_exact(2).map(|p| $c::new(p[0], p[1])).collect();
            HostArray::$variant(ArrayD::from_shape_vec(shape, values).map_err(|e| bad(e.to_string()))?)
        }};
    }
    debug_assert_eq!(data.len(), count * format.dtype.size());
    Ok(match format.dtype {
        Dtype::U8 => decode!(U8, u8),
        Dtype::U16 => decode!(U16, u16),
        Dtype::U32 => decode!(U32, u32),
        Dtype::U64 => decode!(U64, u64),
        Dtype::I8 => decode!(I8, i8),
        Dtype::I16 => decode!(I16, i16),
        Dtype::I32 => decode!(I32, i32),
        Dtype::I64 => decode!(I64, i64),
        Dtype::F32 => decode!(F32, f32),
        Dtype::F64 => decode!(F64, f64),
        Dtype::C32 => decode_complex!(C32, Complex32, f32),
        Dtype::C64 => decode_complex!(C64, Complex64, f64),
    })
}

/// Writes the elements of `array` row-major in `endian` byte order (complex: real then imaginary part),
/// atomically. The shape and type are not stored: keep them (or use NPY).
pub fn write_raw(path: impl AsRef<Path>, array: &HostArray, endian: Endian) -> Result<()> {
    write_atomically(path.as_ref(), |out| {
        each_variant!(array, a => {
            for v in a.iter() {
                let bytes = RawBytes::bytes(v, endian);
                out.write_all(&bytes).map_err(|e| e.to_string())?;
            }
            Ok(())
        })
    })
}

/// The bytes of one element in a byte order.
trait RawBytes {
    fn bytes(&self, endian: Endian) -> Vec<u8>;
}
macro_rules! raw_bytes {
    ($($t:ty),*) => {$(impl RawBytes for $t {
        fn bytes(&self, endian: Endian) -> Vec<u8> {
            match endian { Endian::Little => self.to_le_bytes().to_vec(), Endian::Big => self.to_be_bytes().to_vec() }
        }
    })*};
}
raw_bytes!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
impl<F: RawBytes> RawBytes for num_complex::Complex<F> {
    fn bytes(&self, endian: Endian) -> Vec<u8> {
        let mut b = self.re.bytes(endian);
        b.extend(self.im.bytes(endian));
        b
    }
}
