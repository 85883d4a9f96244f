//! MATLAB MAT files, level 5 (what MATLAB writes by default up to v7, and scipy.io.savemat): every numeric
//! class, real and complex, compressed or not, little- or big-endian. MATLAB's column-major data keeps MATLAB's
//! shape and indexing — `x[i][j]` is `A(i+1, j+1)` — as `scipy.io.loadmat` gives it. Cell, struct, char and
//! sparse variables are skipped (they are not arrays cliper can hold).
//!
//! Our own reader rather than the `matfile` crate: matfile 0.5 failed on every int32 variable (scipy-written ones
//! too) and returned the variables before a truncated element without an error.

use super::host_array::HostArray;
use super::inflate::{Inflater, Wrapper};
use super::sample::{Sample, decode, encode};
use super::source::{MEMORY, open};
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use num_complex::{Complex32, Complex64};
use std::io::Read;
use std::path::Path;

/// Every numeric variable of a MAT file, in file order, as `(name, array)`.
pub fn read_mat(path: impl AsRef<Path>) -> Result<Vec<(String, HostArray)>> {
    let path = path.as_ref();
    let mut bytes = Vec::new();
    open(path)?.read_to_end(&mut bytes).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    decode_variables(&bytes, path)
}

/// [`read_mat`] on the bytes of a MAT file in memory; errors name the source as `<memory>`.
///
/// ```
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/example.mat")).unwrap();
/// let variables = cliper::decode_mat(&bytes)?;
/// assert!(variables.iter().any(|(name, a)| name == "A" && a.shape() == [2, 3]));
/// assert!(cliper::decode_mat(&bytes[..200]).unwrap_err().to_string().contains("truncated"));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn decode_mat(bytes: &[u8]) -> Result<Vec<(String, HostArray)>> {
    decode_variables(bytes, Path::new(MEMORY))
}

fn decode_variables(bytes: &[u8], path: &Path) -> Result<Vec<(String, HostArray)>> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let Some(&[.., v0, v1, m0, m1]) = bytes.get(..128) else {
        return Err(bad(format!("not a MAT file: {} bytes, shorter than the 128-byte header", bytes.len())));
    };
    let little = match [m0, m1] {
        [b'I', b'M'] => true,
        [b'M', b'I'] => false,
        _ => return Err(bad("not a level-5 MAT file (no MI/IM endian mark in the header)".into())),
    };
    // Level 5 says version 0x0100 here; MATLAB's -v7.3 files (HDF5 behind the same header) say 0x0200.
    let version = if little { [v1, v0] } else { [v0, v1] };
    if version == [2, 0] {
        return Err(bad(
            "a MATLAB v7.3 (HDF5) file, which cliper does not read; save it with `save -v7` in MATLAB or with \
             scipy.io.savemat"
                .into(),
        ));
    }
    let mut out = Vec::new();
    let mut pos = 128;
    while pos < bytes.len() {
        let el = element(bytes, pos, little, true).map_err(|r| bad(format!("element at byte {pos}: {r}")))?;
        pos = el.next;
        let (kind, data) = if el.kind == MI_COMPRESSED {
            // Inflated to the stream's end, its Adler-32 checked (a corrupt variable is refused, not loaded), and kept
            // only within the host budget (a small file may inflate to gigabytes).
            let what = format!("compressed element at byte {}", el.start);
            let budget = crate::io::HostBudget::current()?;
            let mut inflater = Inflater::new(el.data, Wrapper::Zlib).map_err(|e| bad(format!("{what}: {e}")))?;
            let mut inflated = Vec::new();
            inflater
                .read_up_to(budget.bytes.saturating_add(1), &mut inflated)
                .map_err(|e| bad(format!("{what}: {e}")))?;
            // Past the budget it is refused at once, before the rest of the stream is inflated.
            budget.check(path, &what, inflated.len() as u64)?;
            inflater.finish().map_err(|e| bad(format!("{what}: {e}")))?;
            let inner = element(&inflated, 0, little, false)
                .map_err(|r| bad(format!("inside the compressed element at byte {}: {r}", el.start)))?;
            (inner.kind, inner.data.to_vec())
        } else {
            (el.kind, el.data.to_vec())
        };
        if kind != MI_MATRIX {
            continue;
        }
        if let Some(var) =
            matrix_variable(&data, little).map_err(|r| bad(format!("variable at byte {}: {r}", el.start)))?
        {
            out.push(var);
        }
    }
    Ok(out)
}

/// Writes one variable into a MAT file (compressed): a new file holds only it; an existing MAT file keeps its
/// other numeric variables and has this one added or replaced (so several results can go to one file, as
/// `out.mat:A` and `out.mat:B` on the command line).
///
/// ```
/// use cliper::{HostArray, read_mat, write_mat_variable};
/// let path = std::env::temp_dir().join(format!("cliper-doc-var-{}.mat", std::process::id()));
/// # std::fs::remove_file(&path).ok();
/// let a = HostArray::F32(ndarray::arr2(&[[1.0f32, 2.0]]).into_dyn());
/// write_mat_variable(&path, "A", &a)?;
/// write_mat_variable(&path, "B", &a)?;
/// let names: Vec<String> = read_mat(&path)?.into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["A", "B"]);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_mat_variable(path: impl AsRef<Path>, name: &str, array: &HostArray) -> Result<()> {
    let path = path.as_ref();
    let mut variables = if path.exists() { read_mat(path)? } else { Vec::new() };
    match variables.iter_mut().find(|(n, _)| n == name) {
        Some((_, a)) => *a = array.clone(),
        None => variables.push((name.to_string(), array.clone())),
    }
    let named: Vec<(&str, &HostArray)> = variables.iter().map(|(n, a)| (n.as_str(), a)).collect();
    write_mat(path, &named, true)
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

const MI_INT8: u32 = 1;
const MI_INT32: u32 = 5;
const MI_UINT32: u32 = 6;
const MI_MATRIX: u32 = 14;
const MI_COMPRESSED: u32 = 15;

/// A data element: its type, its bytes, where it started and where the next one starts.
struct Element<'a> {
    kind: u32,
    data: &'a [u8],
    start: usize,
    next: usize,
}

fn word(bytes: &[u8], at: usize, little: bool) -> std::result::Result<u32, String> {
    let b = bytes
        .get(at..at + 4)
        .ok_or_else(|| format!("truncated: a 4-byte field at byte {at} runs past the end ({} bytes)", bytes.len()))?;
    Ok(u32::read(b, little))
}

/// The element at `pos`, in the normal or the small (4-byte data packed in the tag) format. Top-level
/// compressed elements are not padded; every other element is padded to 8 bytes.
fn element(bytes: &[u8], pos: usize, little: bool, top: bool) -> std::result::Result<Element<'_>, String> {
    let first = word(bytes, pos, little)?;
    let (kind, size, data_at, next) = if first >> 16 != 0 {
        let size = (first >> 16) as usize;
        if size > 4 {
            return Err(format!("a small element claims {size} bytes (at most 4)"));
        }
        (first & 0xffff, size, pos + 4, pos + 8)
    } else {
        let size = word(bytes, pos + 4, little)? as usize;
        let padded = if top && first == MI_COMPRESSED { size } else { size.div_ceil(8) * 8 };
        (first, size, pos + 8, pos + 8 + padded)
    };
    let data = bytes.get(data_at..data_at + size).ok_or_else(|| {
        format!("truncated: the element declares {size} bytes but the data ends at byte {}", bytes.len())
    })?;
    Ok(Element { kind, data, start: pos, next: next.min(bytes.len()).max(data_at + size) })
}

/// A number as stored, before conversion to the variable's class.
#[derive(Clone, Copy)]
enum Stored {
    Int(i128),
    Float(f64),
}

/// The values of a numeric data element (any storage type; MATLAB may store a class in a smaller type).
fn stored_values(el: &Element<'_>, little: bool) -> std::result::Result<Vec<Stored>, String> {
    macro_rules! read {
        ($t:ty, $wrap:expr) => {{
            let n = <$t as Sample>::SIZE;
            if !el.data.len().is_multiple_of(n) {
                return Err(format!("{} bytes do not hold whole {}-byte values", el.data.len(), n));
            }
            decode::<$t>(el.data, little).into_iter().map($wrap).collect()
        }};
    }
    Ok(match el.kind {
        1 => read!(i8, |v| Stored::Int(i128::from(v))),
        2 => read!(u8, |v| Stored::Int(i128::from(v))),
        3 => read!(i16, |v| Stored::Int(i128::from(v))),
        4 => read!(u16, |v| Stored::Int(i128::from(v))),
        5 => read!(i32, |v| Stored::Int(i128::from(v))),
        6 => read!(u32, |v| Stored::Int(i128::from(v))),
        7 => read!(f32, |v| Stored::Float(f64::from(v))),
        9 => read!(f64, Stored::Float),
        12 => read!(i64, |v| Stored::Int(i128::from(v))),
        13 => read!(u64, |v| Stored::Int(i128::from(v))),
        other => return Err(format!("numeric data of MAT type {other} is not supported")),
    })
}

/// A numeric miMATRIX as `(name, array)`; `None` for cell, struct, object, char and sparse variables.
fn matrix_variable(data: &[u8], little: bool) -> std::result::Result<Option<(String, HostArray)>, String> {
    let flags = element(data, 0, little, false)?;
    if flags.kind != MI_UINT32 || flags.data.len() < 8 {
        return Err("the array-flags subelement is missing".into());
    }
    let flag = word(flags.data, 0, little)?;
    let (class, complex) = (flag & 0xff, flag & 0x800 != 0);
    if !(6..=15).contains(&class) {
        return Ok(None);
    }
    let dims_el = element(data, flags.next, little, false)?;
    if dims_el.kind != MI_INT32 {
        return Err("the dimensions subelement is missing".into());
    }
    let dims: Vec<usize> = (0..dims_el.data.len() / 4)
        .map(|k| word(dims_el.data, 4 * k, little).map(|v| v as i32))
        .collect::<std::result::Result<Vec<i32>, String>>()?
        .into_iter()
        .map(|d| usize::try_from(d).map_err(|_| format!("negative dimension {d}")))
        .collect::<std::result::Result<_, _>>()?;
    let name_el = element(data, dims_el.next, little, false)?;
    if name_el.kind != MI_INT8 {
        return Err("the name subelement is missing".into());
    }
    let name = String::from_utf8_lossy(name_el.data).into_owned();
    let real_el = element(data, name_el.next, little, false)?;
    let real = stored_values(&real_el, little)?;
    let imag = if complex { Some(stored_values(&element(data, real_el.next, little, false)?, little)?) } else { None };
    let count = dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).ok_or("dimensions overflow")?;
    if real.len() != count || imag.as_ref().is_some_and(|v| v.len() != count) {
        return Err(format!("{name:?}: dimensions {dims:?} need {count} values, the file holds {}", real.len()));
    }
    let shape = dims.as_slice();
    fn array<V: Clone>(dims: &[usize], v: Vec<V>) -> std::result::Result<ArrayD<V>, String> {
        let column_major = ArrayD::from_shape_vec(IxDyn(dims).f(), v).map_err(|e| e.to_string())?;
        Ok(column_major.as_standard_layout().to_owned())
    }
    let int = |s: Stored| match s {
        Stored::Int(v) => v,
        Stored::Float(v) => v as i128,
    };
    let float = |s: Stored| match s {
        Stored::Int(v) => v as f64,
        Stored::Float(v) => v,
    };
    let value = match (class, imag) {
        (6, None) => HostArray::F64(array(shape, real.into_iter().map(float).collect())?),
        (7, None) => HostArray::F32(array(shape, real.into_iter().map(|s| float(s) as f32).collect())?),
        (8, None) => HostArray::I8(array(shape, real.into_iter().map(|s| int(s) as i8).collect())?),
        (9, None) => HostArray::U8(array(shape, real.into_iter().map(|s| int(s) as u8).collect())?),
        (10, None) => HostArray::I16(array(shape, real.into_iter().map(|s| int(s) as i16).collect())?),
        (11, None) => HostArray::U16(array(shape, real.into_iter().map(|s| int(s) as u16).collect())?),
        (12, None) => HostArray::I32(array(shape, real.into_iter().map(|s| int(s) as i32).collect())?),
        (13, None) => HostArray::U32(array(shape, real.into_iter().map(|s| int(s) as u32).collect())?),
        (14, None) => HostArray::I64(array(shape, real.into_iter().map(|s| int(s) as i64).collect())?),
        (15, None) => HostArray::U64(array(shape, real.into_iter().map(|s| int(s) as u64).collect())?),
        (7, Some(im)) => HostArray::C32(array(
            shape,
            real.into_iter().zip(im).map(|(r, i)| Complex32::new(float(r) as f32, float(i) as f32)).collect(),
        )?),
        // Complex double and complex integer classes (≤ 32 bits exact in float64; 64-bit ones refused).
        (14 | 15, Some(_)) => return Err(format!("{name:?}: complex 64-bit integers are not supported")),
        (_, Some(im)) => HostArray::C64(array(
            shape,
            real.into_iter().zip(im).map(|(r, i)| Complex64::new(float(r), float(i))).collect(),
        )?),
        _ => return Ok(None),
    };
    Ok(Some((name, value)))
}

/// MATLAB class and MAT data type codes of a sample type.
trait MatSample: Sample {
    const CLASS: u32;
    const DATA_TYPE: u32;
}
macro_rules! mat_sample {
    ($($t:ty => $class:expr, $data:expr);* $(;)?) => {$(impl MatSample for $t {
        const CLASS: u32 = $class;
        const DATA_TYPE: u32 = $data;
    })*};
}
mat_sample! {
    f64 => 6, 9; f32 => 7, 7; i8 => 8, 1; u8 => 9, 2; i16 => 10, 3; u16 => 11, 4; i32 => 12, 5; u32 => 13, 6;
    i64 => 14, 12; u64 => 15, 13;
}

/// A data element: tag, bytes, padding to 8.
fn put_element(out: &mut Vec<u8>, data_type: u32, bytes: &[u8]) {
    out.extend_from_slice(&data_type.to_le_bytes());
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
    out.resize(out.len().div_ceil(8) * 8, 0);
}

/// The miMATRIX element of one variable: flags, dimensions, name, real part, imaginary part.
fn matrix<S: MatSample>(name: &str, shape: &[usize], parts: &[Vec<S>]) -> std::result::Result<Vec<u8>, String> {
    let mut body = Vec::new();
    let complex_flag = if parts.len() == 2 { 0x0800 } else { 0 };
    put_element(&mut body, 6, &encode(&[S::CLASS | complex_flag, 0u32], true));
    let mut dims: Vec<usize> = shape.to_vec();
    while dims.len() < 2 {
        dims.insert(0, 1);
    }
    let dims = dims
        .iter()
        .map(|&d| i32::try_from(d).map_err(|_| format!("extent {d} of {name:?} exceeds MAT's 32-bit dimensions")))
        .collect::<std::result::Result<Vec<i32>, String>>()?;
    put_element(&mut body, 5, &encode(&dims, true));
    put_element(&mut body, 1, name.as_bytes());
    for part in parts {
        let bytes = encode(part, true);
        if bytes.len() > u32::MAX as usize {
            return Err(format!("{name:?} holds more than 4 GiB, beyond a level-5 MAT element"));
        }
        put_element(&mut body, S::DATA_TYPE, &bytes);
    }
    if body.len() > u32::MAX as usize {
        return Err(format!("{name:?} holds more than 4 GiB, beyond a level-5 MAT element"));
    }
    let mut out = Vec::with_capacity(body.len() + 8);
    out.extend_from_slice(&14u32.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Column-major samples of an array (MATLAB's order).
fn column_major<V: Copy>(a: &ArrayD<V>) -> Vec<V> {
    a.t().iter().copied().collect()
}

/// Writes variables to a level-5 MAT file (what `scipy.io.loadmat` and MATLAB read), optionally with each
/// variable zlib-compressed, atomically. Arrays keep their shape as MATLAB's `size` (1-D arrays become `1×n`
/// rows, as scipy's `oned_as='row'`); names must be MATLAB identifiers.
///
/// ```
/// use cliper::{HostArray, read_mat_variable, write_mat};
/// let path = std::env::temp_dir().join(format!("cliper-doc-{}.mat", std::process::id()));
/// let a = HostArray::F64(ndarray::arr2(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).into_dyn());
/// let b = HostArray::I16(ndarray::arr2(&[[-7i16]]).into_dyn());
/// write_mat(&path, &[("A", &a), ("b", &b)], true)?;
/// assert_eq!(read_mat_variable(&path, "A")?, a);
/// assert_eq!(read_mat_variable(&path, "b")?, b);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn write_mat(path: impl AsRef<Path>, variables: &[(&str, &HostArray)], compress: bool) -> Result<()> {
    let path = path.as_ref();
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let mut elements = Vec::new();
    for (name, array) in variables {
        let valid = name.len() <= 63
            && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(bad(format!("{name:?} is not a MATLAB variable name (a letter, then letters, digits, _)")));
        }
        let shape = array.shape().to_vec();
        let shape = if let [n] = shape[..] { vec![1, n] } else { shape };
        let m = match array {
            HostArray::U8(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::U16(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::U32(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::U64(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::I8(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::I16(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::I32(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::I64(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::F32(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::F64(a) => matrix(name, &shape, &[column_major(a)]),
            HostArray::C32(a) => {
                let v = column_major(a);
                matrix(name, &shape, &[v.iter().map(|z| z.re).collect(), v.iter().map(|z| z.im).collect()])
            }
            HostArray::C64(a) => {
                let v = column_major(a);
                matrix(name, &shape, &[v.iter().map(|z| z.re).collect(), v.iter().map(|z| z.im).collect()])
            }
        }
        .map_err(bad)?;
        if compress {
            use std::io::Write;
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(&m).map_err(|e| bad(e.to_string()))?;
            let packed = z.finish().map_err(|e| bad(e.to_string()))?;
            let size = u32::try_from(packed.len()).map_err(|_| bad(format!("{name:?} compresses beyond 4 GiB")))?;
            elements.extend_from_slice(&15u32.to_le_bytes());
            elements.extend_from_slice(&size.to_le_bytes());
            elements.extend_from_slice(&packed);
        } else {
            elements.extend_from_slice(&m);
        }
    }
    let mut header =
        format!("MATLAB 5.0 MAT-file, Platform: {}, Created by: cliper", std::env::consts::OS).into_bytes();
    header.resize(116, b' ');
    header.extend_from_slice(&[0; 8]);
    header.extend_from_slice(&0x0100u16.to_le_bytes());
    header.extend_from_slice(b"IM");
    super::save::write_atomically(path, |out| {
        use std::io::Write;
        out.write_all(&header).and_then(|_| out.write_all(&elements)).map_err(|e| e.to_string())
    })
}
