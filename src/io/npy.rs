//! NPY files (numpy's `np.save`), through `ndarray-npy`: every integer type, f32, f64, complex64 and complex128,
//! either byte order, C or Fortran order.

use super::host_array::{Dtype, HostArray, each_variant};
use super::host_budget::check_host_memory;
use super::raw::Endian;
use super::save::write_atomically;
use super::source::{MEMORY, data_bytes, open_sized};
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
    let (file, len) = open_sized(path)?;
    decode(BufReader::new(file), len, path)
}

/// [`read_npy`] on the bytes of an NPY file in memory; errors name the source as `<memory>`.
///
/// ```
/// // A version-1.0 header: magic string, version, length, a dictionary padded to 64 bytes, then the data.
/// fn npy(shape: &str, data: &[u8]) -> Vec<u8> {
///     let dict = format!("{{'descr': '<i2', 'fortran_order': False, 'shape': {shape}, }}");
///     let mut bytes = b"\x93NUMPY\x01\x00\x76\x00".to_vec();
///     bytes.extend(format!("{dict:117}\n").bytes());
///     bytes.extend(data);
///     bytes
/// }
/// let bytes = npy("(3,)", &[1, 0, 2, 0, 255, 255]);
/// assert_eq!(cliper::decode_npy(&bytes)?, cliper::HostArray::I16(ndarray::arr1(&[1i16, 2, -1]).into_dyn()));
/// // A header that claims more elements than the file holds is an error, not an allocation.
/// let claim = npy("(1099511627776,)", &[1, 0]);
/// assert!(cliper::decode_npy(&claim).unwrap_err().to_string().contains("[1099511627776]"));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn decode_npy(bytes: &[u8]) -> Result<HostArray> {
    decode(bytes, bytes.len() as u64, Path::new(MEMORY))
}

fn decode(mut input: impl Read, len: u64, path: &Path) -> Result<HostArray> {
    let format = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let (header, dtype, shape) = read_header(&mut input, path)?;
    // ndarray-npy sizes its buffer from the header's shape: check the claim against the file first.
    let what = format!("the NPY header's shape {shape:?} of {}", dtype.name());
    let bytes = data_bytes(&shape, dtype.size(), len.saturating_sub(header.len() as u64), path, &what)?;
    check_host_memory(path, &format!("reading {what} whole"), bytes as u64)?;
    let reader = std::io::Cursor::new(header).chain(input);
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

/// Where an NPY file's elements lie: their type, shape and byte order, the byte they start at, and whether they
/// are in Fortran (column-major) order — for readers that take the data piece by piece.
pub(crate) fn layout(path: &Path) -> Result<(Dtype, Vec<usize>, Endian, u64, bool)> {
    let mut file = std::fs::File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let (header, dtype, shape) = read_header(&mut file, path)?;
    let text = String::from_utf8_lossy(&header);
    let fortran = text
        .split_once("'fortran_order'")
        .is_some_and(|(_, rest)| rest.trim_start_matches([':', ' ']).starts_with("True"));
    let big = text
        .split_once("'descr'")
        .and_then(|(_, rest)| rest.split(['\'', '"']).nth(1))
        .is_some_and(|d| d.starts_with('>'));
    let endian = if big { Endian::Big } else { Endian::Little };
    Ok((dtype, shape, endian, header.len() as u64, fortran))
}

/// The header of a C-order, little-endian NPY file of `dtype` and `shape` (format 1.0, padded to 64 bytes), the
/// same bytes [`write_npy`] writes, so that a file written slab by slab equals one written whole.
pub(crate) fn header(dtype: Dtype, shape: &[usize]) -> Vec<u8> {
    let descr = match dtype {
        Dtype::U8 => "|u1",
        Dtype::U16 => "<u2",
        Dtype::U32 => "<u4",
        Dtype::U64 => "<u8",
        Dtype::I8 => "|i1",
        Dtype::I16 => "<i2",
        Dtype::I32 => "<i4",
        Dtype::I64 => "<i8",
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
        Dtype::C32 => "<c8",
        Dtype::C64 => "<c16",
    };
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let tuple = if dims.len() == 1 { format!("({},)", dims.join("")) } else { format!("({})", dims.join(", ")) };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}}}");
    // Magic (6) + version (2) + length (2) + dictionary + spaces + newline, a multiple of 64 bytes, with at least
    // one space (as ndarray-npy, which write_npy uses, pads).
    let unpadded = 10 + dict.len() + 1;
    dict.extend(std::iter::repeat_n(' ', 64 - unpadded % 64));
    dict.push('\n');
    let mut out = vec![0x93, b'N', b'U', b'M', b'P', b'Y', 1, 0];
    out.extend((dict.len() as u16).to_le_bytes());
    out.extend(dict.as_bytes());
    out
}

/// The header's bytes (magic string to the end of the dictionary), the element type its `descr` names and its
/// `shape`, read before the data so the right reader can be chosen and the shape checked against the file.
fn read_header(input: &mut impl Read, path: &Path) -> Result<(Vec<u8>, Dtype, Vec<usize>)> {
    let format = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let mut head = [0u8; 12];
    let got = read_up_to(input, &mut head).map_err(io)?;
    let (len, start) = match head {
        [0x93, b'N', b'U', b'M', b'P', b'Y', ..] if got < 10 => {
            return Err(format(format!("truncated: {got} bytes, shorter than an NPY header")));
        }
        [0x93, b'N', b'U', b'M', b'P', b'Y', 1, _, a, b, ..] => (usize::from(u16::from_le_bytes([a, b])), 10),
        [0x93, b'N', b'U', b'M', b'P', b'Y', 2 | 3, _, a, b, c, d] if got == 12 => {
            (u32::from_le_bytes([a, b, c, d]) as usize, 12)
        }
        [0x93, b'N', b'U', b'M', b'P', b'Y', major, minor, ..] => {
            return Err(format(format!("unsupported NPY format version {major}.{minor}")));
        }
        _ => return Err(format("not an NPY file (no \\x93NUMPY magic string at the start)".into())),
    };
    if len > 1 << 20 {
        return Err(format(format!("the NPY header claims {len} bytes; headers are a few hundred")));
    }
    // The rest of the header, from where the first read stopped.
    let mut header = head.get(..got).unwrap_or_default().to_vec();
    header.resize((start + len).max(got), 0);
    let more = read_up_to(input, header.get_mut(got..).unwrap_or_default()).map_err(io)?;
    if got + more < start + len {
        return Err(format(format!("truncated: the header needs {} bytes, the file has {}", start + len, got + more)));
    }
    header.truncate(got + more);
    let text = String::from_utf8_lossy(header.get(start..start + len).unwrap_or_default()).into_owned();
    let quoted = |key: &str| text.split_once(key).and_then(|(_, rest)| rest.split(['\'', '"']).nth(1));
    let descr = quoted("'descr'").ok_or_else(|| format(format!("the header has no 'descr' entry: {}", text.trim())))?;
    let shape_text = text
        .split_once("'shape'")
        .and_then(|(_, rest)| rest.split_once('(')?.1.split_once(')'))
        .map(|(inside, _)| inside)
        .ok_or_else(|| format(format!("the header has no 'shape' tuple: {}", text.trim())))?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('L').parse::<usize>())
        .collect::<std::result::Result<Vec<usize>, _>>()
        .map_err(|_| format(format!("the header's shape ({shape_text}) is not a tuple of whole numbers")))?;
    let code = descr.trim_start_matches(['<', '>', '|', '=']);
    let dtype = match code {
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
    };
    Ok((header, dtype, shape))
}

/// Reads until `buf` is full or the file ends; returns the bytes read.
fn read_up_to(file: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(buf.get_mut(got..).unwrap_or_default())? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file written slab by slab must equal one written whole, header included.
    #[test]
    fn the_slab_header_is_the_one_write_npy_writes() {
        let dir = std::env::temp_dir().join(format!("cliper-npy-header-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for dtype in Dtype::ALL {
            for shape in [&[][..], &[7][..], &[3, 5][..], &[2, 1, 1234567][..]] {
                let path = dir.join("h.npy");
                write_npy(&path, &HostArray::zeros(dtype, shape)).unwrap();
                let whole = std::fs::read(&path).unwrap();
                let ours = header(dtype, shape);
                assert_eq!(&whole[..ours.len()], &ours[..], "{dtype:?} {shape:?}");
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
