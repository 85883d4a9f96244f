//! Opening what the readers read, with errors that name it: files by path and extension, sizes that headers'
//! claims are checked against before anything is allocated, and the name of bytes in memory.

use crate::error::{Error, Result};
use std::fs::File;
use std::path::Path;

/// The name errors give a source that is bytes in memory (`decode_png` and the other `decode_*` functions).
pub(crate) const MEMORY: &str = "<memory>";

/// The lower-case extension of `path`, or an error naming the path.
pub(crate) fn extension(path: &Path) -> Result<String> {
    path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()).ok_or_else(|| Error::Format {
        path: path.to_path_buf(),
        reason: "the file name has no extension to tell its format (.npy, .cfl/.hdr, .png, .tif/.tiff, .mat, or .raw through load_raw)".into(),
    })
}

/// An error naming an unsupported extension.
pub(crate) fn unsupported_extension(path: &Path, ext: &str) -> Error {
    Error::Format {
        path: path.to_path_buf(),
        reason: format!(
            "unknown extension .{ext}; cliper reads and writes .npy, .cfl/.hdr (BART), .png, .tif/.tiff, .mat, and .raw through load_raw/save_raw"
        ),
    }
}

/// Opens `path` for reading, with an error naming it.
pub(crate) fn open(path: &Path) -> Result<File> {
    File::open(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })
}

/// The bytes of data `what` needs — `shape`'s elements of `element` bytes each — checked against the
/// `available` bytes before anything is allocated: a header's claim that overflows or does not match the file
/// is an error naming both sizes.
pub(crate) fn data_bytes(shape: &[usize], element: usize, available: u64, path: &Path, what: &str) -> Result<usize> {
    let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    match shape.iter().try_fold(element, |a, &b| a.checked_mul(b)) {
        None => Err(bad(format!("{what} overflows the address space"))),
        Some(needed) if needed as u64 != available => {
            Err(bad(format!("{what} needs {needed} bytes of data but the file has {available} bytes")))
        }
        Some(needed) => Ok(needed),
    }
}

/// Opens `path` for reading and gives its size in bytes, which readers check headers' claims against.
pub(crate) fn open_sized(path: &Path) -> Result<(File, u64)> {
    let file = open(path)?;
    let size = file.metadata().map_err(|source| Error::Io { path: path.to_path_buf(), source })?.len();
    Ok((file, size))
}
