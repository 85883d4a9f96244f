//! CFL files (BART): `NAME.hdr`, a text header (`# Dimensions` then the extents, first fastest), and
//! `NAME.cfl`, the complex64 elements in column-major order. Arrays keep BART's dimension order and indexing:
//! element `x[i, j, …]` is BART's `(i, j, …)` (as `cfl.readcfl` gives in numpy), with trailing extents of 1
//! dropped as `readcfl` drops them.

use super::host_array::HostArray;
use super::sample::{decode, encode};
use super::save::{commit, prepare};
use super::source::{MEMORY, data_bytes, open, open_sized};
use crate::error::{Error, Result};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use num_complex::Complex32;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

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
    let (mut file, size) = open_sized(&cfl)?;
    let bytes = data_bytes(&dims, 8, size, &cfl, &format!("extents {dims:?} of complex64"))?;
    crate::io::check_host_memory(&cfl, "the CFL data and its array", (bytes as u64).saturating_mul(2))?;
    let mut data = vec![0u8; bytes];
    file.read_exact(&mut data).map_err(|source| Error::Io { path: cfl.clone(), source })?;
    complex_array(&data, &dims, &cfl)
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
    let column_major = ArrayD::from_shape_vec(IxDyn(dims).f(), values)
        .map_err(|e| Error::Format { path: cfl.to_path_buf(), reason: e.to_string() })?;
    Ok(HostArray::C32(column_major.as_standard_layout().to_owned()))
}

/// Writes a CFL pair (`name.hdr` + `name.cfl`; pass either or the base name), both files atomically and
/// together. Real data is written with zero imaginary parts; only complex64 and data exactly representable in
/// it are accepted.
pub fn write_cfl(path: impl AsRef<Path>, array: &HostArray) -> Result<()> {
    let (hdr, cfl) = pair(path.as_ref());
    // BART's files hold complex64: other types go in only when every value is exact in it.
    let values = array.to_elements::<Complex32>(&cfl).map_err(|e| match e {
        Error::Type { got, .. } => Error::Format {
            path: cfl.clone(),
            reason: format!(
                "a CFL holds complex64 (c32) values and this {} array does not fit exactly: {got}; convert it to c32 \
                 first (on the command line: --type c32)",
                array.dtype().name()
            ),
        },
        other => other,
    })?;
    // Column-major: the transposed view iterated in row-major order.
    let bytes = encode(values.t().iter(), true);
    let dims: Vec<String> = array.shape().iter().map(|n| n.to_string()).collect();
    let dims = if dims.is_empty() { "1".to_string() } else { dims.join(" ") };
    // Both files written in full before either is renamed, and renamed together: never a new .cfl beside an
    // old .hdr.
    let data = prepare(&cfl, |out| out.write_all(&bytes).map_err(|e| e.to_string()))?;
    let header = prepare(&hdr, |out| write!(out, "# Dimensions\n{dims}\n").map_err(|e| e.to_string()))?;
    commit(vec![data, header])
}
