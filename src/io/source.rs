//! Opening what the readers read, with errors that name it: files by path and extension, sizes that headers'
//! claims are checked against before anything is allocated, and the name of bytes in memory.

use crate::error::{Error, Result};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The name errors give a source that is bytes in memory (`decode_png` and the other `decode_*` functions).
pub(crate) const MEMORY: &str = "<memory>";

/// The formats cliper reads and writes, for messages.
const FORMATS: &str = ".npy, .cfl/.hdr (BART), .png, .tif/.tiff, .mat, .nii/.nii.gz (NIfTI), .raw through \
                       load_raw/save_raw, and for reading .dcm or a folder of DICOM files, .nrrd/.nhdr and .mha/.mhd";

/// The lower-case extension of `path` — `nii.gz` for gzipped NIfTI, `dcm` for a DICOM file without an
/// extension (recognised by `DICM` at byte 128, as DICOM part 10 files begin) and `dicom-series` for a folder
/// (a DICOM series) — or an error naming the path.
pub(crate) fn extension(path: &Path) -> Result<String> {
    if path.is_dir()
        || (!path.exists() && path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains(['*', '?'])))
    {
        // A folder, or a pattern naming files (`scan/IM*`): a DICOM series.
        return Ok("dicom-series".into());
    }
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_ascii_lowercase();
    if name.ends_with(".nii.gz") {
        return Ok("nii.gz".into());
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) => Ok(e.to_ascii_lowercase()),
        None if has_dicom_preamble(path) => Ok("dcm".into()),
        None => Err(Error::Format {
            path: path.to_path_buf(),
            reason: format!("the file name has no extension to tell its format ({FORMATS})"),
        }),
    }
}

/// [`extension`] for a file to be read: a path that does not exist is said to be missing, and a BART base name
/// (`us` beside `us.cfl` and `us.hdr`, as BART's tools name their files) is a CFL pair.
pub(crate) fn extension_to_read(path: &Path) -> Result<String> {
    let pattern = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.contains(['*', '?']));
    if path.exists() || pattern {
        return extension(path);
    }
    if path.extension().is_none() && path.with_extension("cfl").is_file() {
        return Ok("cfl".into());
    }
    Err(Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "does not exist"),
    })
}

/// Whether `path` is a DICOM file by its name or its first bytes: a `.dcm` extension, or no extension and `DICM`
/// after the 128-byte preamble (part 10 files from scanners often have no extension). Folders of such files are
/// DICOM series; `DICOMDIR` index files are not images and are left out.
///
/// ```
/// let ct = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/rgb_3x5.png");
/// assert!(!cliper::is_dicom_file(ct));
/// ```
pub fn is_dicom_file(path: impl AsRef<Path>) -> bool {
    let path = path.as_ref();
    if !path.is_file() || path.file_name().is_some_and(|n| n.eq_ignore_ascii_case("DICOMDIR")) {
        return false;
    }
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) => e.eq_ignore_ascii_case("dcm"),
        None => has_dicom_preamble(path),
    }
}

/// The files of `pattern`'s folder whose names match its file name, sorted, when that name holds `*` or `?` (and
/// no file of that very name exists); `None` for plain paths. Only the file name may hold wildcards.
pub(crate) fn matching_files(pattern: &Path) -> Result<Option<Vec<PathBuf>>> {
    let Some(name) = pattern.file_name().and_then(|n| n.to_str()) else { return Ok(None) };
    if !name.contains(['*', '?']) || pattern.exists() {
        return Ok(None);
    }
    let dir = match pattern.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let entries = std::fs::read_dir(&dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(|n| wildcard(name, n)))
        .collect();
    files.sort();
    Ok(Some(files))
}

/// Whether `text` matches `pattern`, where `*` is any run of characters and `?` any one character.
fn wildcard(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // The classic backtracking match: remember the last `*` and how much of `text` it has taken.
    let (mut i, mut j, mut star, mut taken) = (0, 0, None, 0);
    while j < t.len() {
        match p.get(i) {
            Some('*') => {
                star = Some(i);
                taken = j;
                i += 1;
            }
            Some(&c) if c == '?' || Some(&c) == t.get(j) => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some(s) => {
                    i = s + 1;
                    taken += 1;
                    j = taken;
                }
                None => return false,
            },
        }
    }
    p.get(i..).is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

/// Whether the file at `path` starts as a DICOM part 10 file does: a 128-byte preamble, then `DICM`.
pub(crate) fn has_dicom_preamble(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 132];
    File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && head.get(128..) == Some(b"DICM".as_slice())
}

/// An error naming an unsupported extension.
pub(crate) fn unsupported_extension(path: &Path, ext: &str) -> Error {
    let reason = match ext {
        // Formats cliper reads but does not write from a file name.
        "dcm" | "dicom-series" => "cliper reads DICOM; it writes a DICOM series only from the library \
                                   (write_dicom_series): save the result as .nii.gz, which keeps its geometry"
            .to_string(),
        "nrrd" | "nhdr" | "mha" | "mhd" => {
            format!("cliper reads .{ext} but does not write it: save as .nii.gz, which keeps the geometry")
        }
        _ => {
            format!("unknown extension .{ext}; cliper reads and writes {FORMATS}; tables (measure) also .csv and .json")
        }
    };
    Error::Format { path: path.to_path_buf(), reason }
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

#[cfg(test)]
mod tests {
    use super::wildcard;

    #[test]
    fn wildcards_match_as_shells_do() {
        for (pattern, text, want) in [
            ("IM*", "IM0001.dcm", true),
            ("*.dcm", "IM0001.dcm", true),
            ("*.dcm", "IM0001.dcm.bak", false),
            ("IM00?1.dcm", "IM0021.dcm", true),
            ("IM00?1.dcm", "IM001.dcm", false),
            ("*a*b", "xxaybb", true),
            ("*", "", true),
            ("?", "", false),
        ] {
            assert_eq!(wildcard(pattern, text), want, "{pattern} ~ {text}");
        }
    }
}
