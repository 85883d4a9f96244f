//! MATLAB MAT files (level 5, compressed or not) read through the `matfile` crate: every numeric class, real and
//! complex, by variable name. MATLAB's column-major data keeps MATLAB's shape and indexing — `x[i][j]` is
//! `A(i+1, j+1)` — as `scipy.io.loadmat` gives it.

use super::{HostArray, open};
use crate::error::{Error, Result};
use matfile::{MatFile, NumericData};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use num_complex::{Complex32, Complex64};
use std::io::BufReader;
use std::path::Path;

/// Every numeric variable of a MAT file, in file order, as `(name, array)`.
pub fn read_mat(path: impl AsRef<Path>) -> Result<Vec<(String, HostArray)>> {
    let path = path.as_ref();
    check_elements(path)?;
    let file = MatFile::parse(BufReader::new(open(path)?))
        .map_err(|e| Error::Format { path: path.to_path_buf(), reason: format!("not a readable MAT file: {e}") })?;
    file.arrays().iter().map(|a| Ok((a.name().to_string(), convert(path, a)?))).collect()
}

/// One variable of a MAT file by name; the error lists the variables the file has.
///
/// The example's `example.mat` is written by tests/fixtures/make_mat.py with `scipy.io.savemat`.
/// ```
/// use cliper::{HostArray, read_mat_variable};
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/example.mat");
/// let HostArray::F64(a) = read_mat_variable(path, "A")? else { panic!() };
/// assert_eq!(a.shape(), &[2, 3]);           // MATLAB's size(A)
/// assert_eq!(a[[1, 2]], 6.0);               // A(2, 3)
/// assert!(read_mat_variable(path, "nope").unwrap_err().to_string().contains("A"));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_mat_variable(path: impl AsRef<Path>, name: &str) -> Result<HostArray> {
    let path = path.as_ref();
    let mut all = read_mat(path)?;
    match all.iter().position(|(n, _)| n == name) {
        Some(i) => Ok(all.swap_remove(i).1),
        None => {
            let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
            Err(Error::Format {
                path: path.to_path_buf(),
                reason: format!("no numeric variable {name:?}; the file has {names:?}"),
            })
        }
    }
}

/// Walks the file's top-level data elements and checks that each fits in the file: `matfile` returns the
/// variables before a truncated element without a word, which would silently drop data.
fn check_elements(path: &Path) -> Result<()> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    if bytes.len() < 128 {
        return Err(bad(format!("not a MAT file: {} bytes, shorter than the 128-byte header", bytes.len())));
    }
    let little = match &bytes[126..128] {
        b"IM" => true,
        b"MI" => false,
        _ => return Err(bad("not a level-5 MAT file (no MI/IM endian mark in the header)".into())),
    };
    let word = |at: usize| {
        let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        if little { u32::from_le_bytes(b) } else { u32::from_be_bytes(b) }
    };
    let mut pos = 128;
    while pos < bytes.len() {
        if pos + 8 > bytes.len() {
            return Err(bad(format!(
                "truncated: a data element starts at byte {pos} but the file ends at {}",
                bytes.len()
            )));
        }
        let (kind, size) = (word(pos), word(pos + 4) as usize);
        // Compressed elements (type 15) are not padded; the others are padded to 8 bytes.
        let body = if kind == 15 { size } else { size.div_ceil(8) * 8 };
        let end = pos + 8 + body;
        if end > bytes.len() && !(kind != 15 && pos + 8 + size == bytes.len()) {
            return Err(bad(format!(
                "truncated: the data element at byte {pos} declares {size} bytes but the file ends at {}",
                bytes.len()
            )));
        }
        pos = end;
    }
    Ok(())
}

fn convert(path: &Path, array: &matfile::Array) -> Result<HostArray> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let dims = IxDyn(array.size()).f();
    let name = array.name();
    macro_rules! real {
        ($variant:ident, $v:expr) => {
            HostArray::$variant(
                ArrayD::from_shape_vec(dims, $v.clone())
                    .map_err(|e| bad(format!("variable {name:?}: {e}")))?
                    .as_standard_layout()
                    .to_owned(),
            )
        };
    }
    macro_rules! complex {
        ($variant:ident, $c:ident, $re:expr, $im:expr, $to:expr) => {{
            if $re.len() != $im.len() {
                return Err(bad(format!("variable {name:?}: real and imaginary parts differ in length")));
            }
            let values: Vec<$c> = $re.iter().zip($im.iter()).map(|(&r, &i)| $c::new($to(r), $to(i))).collect();
            HostArray::$variant(
                ArrayD::from_shape_vec(dims, values)
                    .map_err(|e| bad(format!("variable {name:?}: {e}")))?
                    .as_standard_layout()
                    .to_owned(),
            )
        }};
    }
    // Complex integer classes become complex128, which holds every value up to 32 bits exactly; 64-bit ones are
    // refused rather than rounded.
    Ok(match array.data() {
        NumericData::Int8 { real: r, imag: None } => real!(I8, r),
        NumericData::UInt8 { real: r, imag: None } => real!(U8, r),
        NumericData::Int16 { real: r, imag: None } => real!(I16, r),
        NumericData::UInt16 { real: r, imag: None } => real!(U16, r),
        NumericData::Int32 { real: r, imag: None } => real!(I32, r),
        NumericData::UInt32 { real: r, imag: None } => real!(U32, r),
        NumericData::Int64 { real: r, imag: None } => real!(I64, r),
        NumericData::UInt64 { real: r, imag: None } => real!(U64, r),
        NumericData::Single { real: r, imag: None } => real!(F32, r),
        NumericData::Double { real: r, imag: None } => real!(F64, r),
        NumericData::Single { real: r, imag: Some(i) } => complex!(C32, Complex32, r, i, |v: f32| v),
        NumericData::Double { real: r, imag: Some(i) } => complex!(C64, Complex64, r, i, |v: f64| v),
        NumericData::Int8 { real: r, imag: Some(i) } => complex!(C64, Complex64, r, i, f64::from),
        NumericData::UInt8 { real: r, imag: Some(i) } => complex!(C64, Complex64, r, i, f64::from),
        NumericData::Int16 { real: r, imag: Some(i) } => complex!(C64, Complex64, r, i, f64::from),
        NumericData::UInt16 { real: r, imag: Some(i) } => complex!(C64, Complex64, r, i, f64::from),
        NumericData::Int32 { real: r, imag: Some(i) } => complex!(C64, Complex64, r, i, f64::from),
        NumericData::UInt32 { real: r, imag: Some(i) } => complex!(C64, Complex64, r, i, f64::from),
        NumericData::Int64 { imag: Some(_), .. } | NumericData::UInt64 { imag: Some(_), .. } => {
            return Err(bad(format!("variable {name:?}: complex 64-bit integers are not supported")));
        }
    })
}
