//! NPY files (numpy's `np.save`), through `ndarray-npy`: every integer type, f32, f64, complex64 and complex128,
//! either byte order, C or Fortran order.

use super::{Dtype, HostArray, each_variant, open, write_atomically};
use crate::error::{Error, Result};
use ndarray::ArrayD;
use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use std::io::{BufReader, Read};
use std::path::Path;

/// Reads an NPY file in the element type it holds.
///
/// ```
/// use cliper::{HostArray, read_npy, write_npy};
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.npy", std::process::id()));
/// write_npy(&path, &HostArray::I16(ndarray::arr2(&[[1i16, -2], [3, 4]]).into_dyn()))?;
/// let back = read_npy(&path)?;
/// assert_eq!((back.dtype(), back.shape()), (cliper::Dtype::I16, &[2usize, 2][..]));
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_npy(path: impl AsRef<Path>) -> Result<HostArray> {
    let path = path.as_ref();
    let format = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let dtype = header_dtype(path)?;
    let reader = BufReader::new(open(path)?);
    macro_rules! read {
        ($variant:ident, $t:ty) => {
            ArrayD::<$t>::read_npy(reader)
                .map(HostArray::$variant)
                .map_err(|e| format(format!("not a valid NPY file: {e}")))
        };
    }
    match dtype {
        Dtype::U8 => read!(U8, u8),
        Dtype::U16 => read!(U16, u16),
        Dtype::U32 => read!(U32, u32),
        Dtype::U64 => read!(U64, u64),
        Dtype::I8 => read!(I8, i8),
        Dtype::I16 => read!(I16, i16),
        Dtype::I32 => read!(I32, i32),
        Dtype::I64 => read!(I64, i64),
        Dtype::F32 => read!(F32, f32),
        Dtype::F64 => read!(F64, f64),
        Dtype::C32 => read!(C32, num_complex::Complex32),
        Dtype::C64 => read!(C64, num_complex::Complex64),
    }
}

/// Writes an NPY file (little-endian, C order) that `numpy.load` reads back exactly; atomically (a temporary
/// file renamed over `path`).
pub fn write_npy(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    write_atomically(path.as_ref(), |out| each_variant!(array, a => a.write_npy(out).map_err(|e| e.to_string())))
}

/// The element type named by the header's `descr`, read before the data so the right reader can be chosen.
fn header_dtype(path: &Path) -> Result<Dtype> {
    let format = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let mut file = open(path)?;
    let mut head = [0u8; 12];
    let got = read_up_to(&mut file, &mut head).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    if got < 10 || &head[..6] != b"\x93NUMPY" {
        return Err(format("not an NPY file (no \\x93NUMPY magic string at the start)".into()));
    }
    let (len, start) = match head[6] {
        1 => (u16::from_le_bytes([head[8], head[9]]) as usize, 10),
        2 | 3 if got == 12 => (u32::from_le_bytes([head[8], head[9], head[10], head[11]]) as usize, 12),
        v => return Err(format(format!("unsupported NPY format version {v}.{}", head[7]))),
    };
    if len > 1 << 20 {
        return Err(format(format!("the NPY header claims {len} bytes; headers are a few hundred")));
    }
    // The rest of the header, from where the first read stopped.
    let mut header = head[..got].to_vec();
    header.resize((start + len).max(got), 0);
    let more =
        read_up_to(&mut file, &mut header[got..]).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    if got + more < start + len {
        return Err(format(format!("truncated: the header needs {} bytes, the file has {}", start + len, got + more)));
    }
    let text = String::from_utf8_lossy(&header[start..start + len]);
    let descr = text
        .split_once("'descr'")
        .and_then(|(_, rest)| rest.split(['\'', '"']).nth(1))
        .ok_or_else(|| format(format!("the header has no 'descr' entry: {}", text.trim())))?;
    let code = descr.trim_start_matches(['<', '>', '|', '=']);
    Ok(match code {
        "u1" => Dtype::U8,
        "u2" => Dtype::U16,
        "u4" => Dtype::U32,
        "u8" => Dtype::U64,
        "i1" => Dtype::I8,
        "i2" => Dtype::I16,
        "i4" => Dtype::I32,
        "i8" => Dtype::I64,
        "f4" => Dtype::F32,
        "f8" => Dtype::F64,
        "c8" => Dtype::C32,
        "c16" => Dtype::C64,
        _ => {
            return Err(format(format!(
                "element type {descr:?} is not supported (integers, float32/64, complex64/128 are)"
            )));
        }
    })
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_up_to(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}
