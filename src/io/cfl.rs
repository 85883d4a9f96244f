//! CFL files (BART): `NAME.hdr`, a text header (`# Dimensions` then the extents, first fastest), and
//! `NAME.cfl`, the complex64 elements in column-major order. Arrays keep BART's dimension order and indexing:
//! element `x[i, j, …]` is BART's `(i, j, …)` (as `cfl.readcfl` gives in numpy), with trailing extents of 1
//! dropped as `readcfl` drops them.
//!
//! A pair is two files, renamed into place one after the other: a run killed between the two renames leaves a
//! new header beside old data. So that such a torn pair is refused rather than read with the wrong shape, the
//! headers cliper writes end in a section BART's reader skips (it acts on `# Dimensions` only and skips the lines
//! of other `#` keywords), `# Cliper-Data` then `bytes N crc32 XXXXXXXX`: the data file's size and CRC-32.
//! The header is renamed first, so a torn pair always has a header that describes other data. Headers without the
//! section (BART's, numpy's `cfl.writecfl`) load as before, checked by size alone.

use super::axis_order::column_to_row_major;
use super::host_array::HostArray;
use super::sample::{decode, encode};
use super::save::{commit, prepare};
use super::source::{MEMORY, data_bytes, open, open_sized};
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex32;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The keyword of the header section that ties a header to its data.
const DATA_KEYWORD: &str = "# Cliper-Data";

/// The base name of a CFL pair (`k.cfl`, `k.hdr` or `k` → `k`) with `suffix` appended (`.hdr`, `_sens`, …).
pub(super) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let base = match path.extension().and_then(|e| e.to_str()) {
        Some("cfl" | "hdr") => path.with_extension(""),
        _ => path.to_path_buf(),
    };
    let mut name = base.into_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The `.hdr` and `.cfl` paths of a CFL pair named by either file or by the base name.
pub(super) fn pair(path: &Path) -> (PathBuf, PathBuf) {
    (with_suffix(path, ".hdr"), with_suffix(path, ".cfl"))
}

/// Reads a CFL pair (pass `name.cfl`, `name.hdr` or `name`) as complex64 with BART's dimension order.
///
/// ```
/// use cliper::{HostArray, read_cfl, write_cfl};
/// use num_complex::Complex32 as C;
/// let base = std::env::temp_dir().join(format!("cliper-doc-cfl-{}", std::process::id()));
/// let a = ndarray::arr2(&[[C::new(1.0, 0.0), C::new(2.0, 0.0)], [C::new(3.0, 0.0), C::new(4.0, -1.0)]]);
/// write_cfl(&base, &HostArray::C32(a.clone().into_dyn()))?;
/// let text = std::fs::read_to_string(base.with_extension("hdr")).unwrap();
/// assert!(text.starts_with("# Dimensions\n2 2"));
/// assert_eq!(read_cfl(base.with_extension("cfl"))?, HostArray::C32(a.into_dyn()));
/// # std::fs::remove_file(base.with_extension("hdr")).ok(); std::fs::remove_file(base.with_extension("cfl")).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn read_cfl(path: impl AsRef<Path>) -> Result<HostArray> {
    let (hdr, cfl) = pair(path.as_ref());
    let mut text = String::new();
    open(&hdr)?
        .take(1 << 16)
        .read_to_string(&mut text)
        .map_err(|e| Error::Format { path: hdr.clone(), reason: format!("not a text header: {e}") })?;
    let dims = extents(&text, &hdr)?;
    let written = written_data(&text, &hdr)?;
    let (mut file, size) = open_sized(&cfl)?;
    if let Some(written) = &written
        && written.bytes != size
    {
        return Err(torn(&hdr, &cfl, written, &format!("{size} bytes")));
    }
    let bytes = data_bytes(&dims, 8, size, &cfl, &format!("extents {dims:?} of complex64"))?;
    crate::io::check_host_memory(&cfl, "the CFL data and its array", (bytes as u64).saturating_mul(2))?;
    let mut data = vec![0u8; bytes];
    file.read_exact(&mut data).map_err(|source| Error::Io { path: cfl.clone(), source })?;
    if let Some(written) = &written {
        let crc = crc32fast::hash(&data);
        if crc != written.crc {
            return Err(torn(&hdr, &cfl, written, &format!("CRC-32 {crc:08x}")));
        }
    }
    complex_array(&data, &dims, &cfl)
}

/// What a header written by cliper says of its data file.
#[derive(Debug, PartialEq)]
struct WrittenData {
    bytes: u64,
    crc: u32,
}

/// The data file's size and CRC-32 that the header's `# Cliper-Data` section gives; `None` for a header
/// without one (written by BART or numpy).
fn written_data(text: &str, hdr: &Path) -> Result<Option<WrittenData>> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    if !lines.any(|l| l == DATA_KEYWORD) {
        return Ok(None);
    }
    let line = lines.next().unwrap_or_default();
    let parsed = match line.split_whitespace().collect::<Vec<_>>()[..] {
        ["bytes", bytes, "crc32", crc] => bytes.parse().ok().zip(u32::from_str_radix(crc, 16).ok()),
        _ => None,
    };
    let (bytes, crc) = parsed.ok_or_else(|| Error::Format {
        path: hdr.to_path_buf(),
        reason: format!("`{DATA_KEYWORD}` is followed by {line:?}, not `bytes N crc32 XXXXXXXX`"),
    })?;
    Ok(Some(WrittenData { bytes, crc }))
}

/// The error for data that is not what its header was written with: `found` is what the data has instead.
fn torn(hdr: &Path, cfl: &Path, written: &WrittenData, found: &str) -> Error {
    Error::Format {
        path: cfl.to_path_buf(),
        reason: format!(
            "not the data its header {} was written with ({} bytes, CRC-32 {:08x}; this file has {found}): a pair \
             torn by an interrupted save, or one file replaced alone; write the pair again",
            hdr.display(),
            written.bytes,
            written.crc
        ),
    }
}

/// Whether the CFL pair at `path` (either file or the base name) is whole: a readable header, data of the size
/// its extents need and, for headers cliper wrote, of the size and CRC-32 recorded there. Reads the data in
/// pieces (a completeness check of many outputs, as `--skip-existing` makes, holds none of them in memory).
#[cfg(feature = "chain")]
pub(crate) fn is_whole_pair(path: &Path) -> bool {
    let (hdr, cfl) = pair(path);
    let whole = || -> Result<bool> {
        let mut text = String::new();
        open(&hdr)?
            .take(1 << 16)
            .read_to_string(&mut text)
            .map_err(|source| Error::Io { path: hdr.clone(), source })?;
        let dims = extents(&text, &hdr)?;
        let (file, size) = open_sized(&cfl)?;
        data_bytes(&dims, 8, size, &cfl, "")?;
        let Some(written) = written_data(&text, &hdr)? else { return Ok(true) };
        if written.bytes != size {
            return Ok(false);
        }
        let mut crc = crc32fast::Hasher::new();
        let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
        let mut piece = vec![0u8; 1 << 20];
        loop {
            match reader.read(&mut piece).map_err(|source| Error::Io { path: cfl.clone(), source })? {
                0 => break,
                n => crc.update(piece.get(..n).unwrap_or_default()),
            }
        }
        Ok(crc.finalize() == written.crc)
    };
    whole().unwrap_or(false)
}

/// [`read_cfl`] on a header's text and the data file's bytes in memory; errors name the source as `<memory>`.
///
/// ```
/// let one = [0u8, 0, 128, 63, 0, 0, 0, 0]; // 1 + 0i as complex64
/// let a = cliper::decode_cfl("# Dimensions\n1 1 1 1 1\n", &one)?;
/// assert_eq!(a.shape(), &[1]);
/// assert!(cliper::decode_cfl("# Dimensions\n4294967296 4294967296\n", &one).is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn decode_cfl(header: &str, data: &[u8]) -> Result<HostArray> {
    let source = Path::new(MEMORY);
    let dims = extents(header, source)?;
    if let Some(written) = written_data(header, source)?
        && (written.bytes != data.len() as u64 || written.crc != crc32fast::hash(data))
    {
        let found = format!("{} bytes, CRC-32 {:08x}", data.len(), crc32fast::hash(data));
        return Err(torn(source, source, &written, &found));
    }
    data_bytes(&dims, 8, data.len() as u64, source, &format!("extents {dims:?} of complex64"))?;
    complex_array(data, &dims, source)
}

/// The extents on the line after `# Dimensions`, with trailing extents of 1 dropped.
fn extents(text: &str, hdr: &Path) -> Result<Vec<usize>> {
    let bad = |reason: String| Error::Format { path: hdr.to_path_buf(), reason };
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut dims: Option<Vec<usize>> = None;
    while let Some(line) = lines.next() {
        if line.starts_with("# Dimensions") {
            let values = lines.next().ok_or_else(|| bad("`# Dimensions` is not followed by the extents".into()))?;
            let parsed: std::result::Result<Vec<usize>, _> = values.split_whitespace().map(str::parse).collect();
            dims = Some(parsed.map_err(|_| bad(format!("extents {values:?} are not whole numbers")))?);
            break;
        }
    }
    let mut dims = dims.ok_or_else(|| bad("no `# Dimensions` line".into()))?;
    if dims.is_empty() {
        return Err(bad("the `# Dimensions` line lists no extents".into()));
    }
    while dims.len() > 1 && dims.last() == Some(&1) {
        dims.pop();
    }
    Ok(dims)
}

fn complex_array(data: &[u8], dims: &[usize], cfl: &Path) -> Result<HostArray> {
    let values: Vec<Complex32> = decode(data, true);
    let row_major = column_to_row_major(&values, dims);
    let array = ArrayD::from_shape_vec(IxDyn(dims), row_major)
        .map_err(|e| Error::Format { path: cfl.to_path_buf(), reason: e.to_string() })?;
    Ok(HostArray::C32(array))
}

/// Writes a CFL pair (`name.hdr` + `name.cfl`; pass either or the base name), both files atomically and
/// together, the header ending in the data's size and CRC-32 (`# Cliper-Data`, which BART skips) so that a pair
/// torn by a kill between the two renames is refused on reading. Real data is written with zero imaginary parts;
/// only complex64 and data exactly representable in it are accepted.
pub fn write_cfl(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    let (hdr, cfl) = pair(path.as_ref());
    // BART's files hold complex64: other types go in only when every value is exact in it.
    let values = array.to_elements::<Complex32>(&cfl).map_err(|e| match e {
        Error::Inexact { stored, value, .. } => Error::Format {
            path: cfl.clone(),
            reason: format!(
                "a CFL holds complex64 (c32) values and this {stored} array does not fit exactly: value {value} is not \
                 exactly representable as c32; convert it to c32 first (on the command line: --type c32)"
            ),
        },
        other => other,
    })?;
    // Column-major: row-major data of the extents reversed is column-major data of the extents.
    let row_major = values.as_standard_layout();
    let reversed: Vec<usize> = values.shape().iter().rev().copied().collect();
    let bytes = encode(&column_to_row_major(row_major.as_slice().unwrap_or_default(), &reversed), true);
    let dims: Vec<String> = array.shape().iter().map(|n| n.to_string()).collect();
    let dims = if dims.is_empty() { "1".to_string() } else { dims.join(" ") };
    let integrity = format!("{DATA_KEYWORD}\nbytes {} crc32 {:08x}\n", bytes.len(), crc32fast::hash(&bytes));
    // Both files written in full before either is renamed, and renamed together under the lock an interrupt
    // takes. Only a kill can come between the renames: the header goes first, so what it leaves is a header
    // whose size and CRC-32 are not the old data's, never old extents over new data.
    let header = prepare(&hdr, |out| write!(out, "# Dimensions\n{dims}\n{integrity}").map_err(|e| e.to_string()))?;
    let data = prepare(&cfl, |out| out.write_all(&bytes).map_err(|e| e.to_string()))?;
    commit(vec![header, data])
}
