//! Saves that never leave a partial file: each file is written to a temporary name beside its destination,
//! flushed to disk, then renamed over it. Temporary files in flight are registered, so an interrupted run
//! ([`abandon_saves`], which the CLI calls on SIGINT and SIGTERM) removes them and renames nothing more.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Temporary files being written, and whether the run was abandoned.
struct InFlight {
    temporaries: Vec<PathBuf>,
    abandoned: bool,
}

static IN_FLIGHT: Mutex<InFlight> = Mutex::new(InFlight { temporaries: Vec::new(), abandoned: false });

fn in_flight() -> MutexGuard<'static, InFlight> {
    // Every update under the lock is a single push, removal or assignment: a panic elsewhere cannot leave the
    // list half-changed, so a poisoned lock is still right to use.
    IN_FLIGHT.lock().unwrap_or_else(|p| p.into_inner())
}

fn abandoned(path: &Path) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(ErrorKind::Interrupted, "the run was interrupted; nothing was saved here"),
    }
}

/// Removes the temporary file of every save in flight and makes later saves fail (`Error::Io` of kind
/// `Interrupted`) without touching their destinations; returns how many temporary files were removed. Files
/// already renamed into place are complete and stay.
///
/// Call it when a run is interrupted (the `cliper` CLI does, on SIGINT and SIGTERM, then exits with 130); it
/// takes the same lock that renames hold, so a save being renamed finishes first and a CFL pair is never
/// left half-renamed.
///
/// ```no_run
/// // In a signal handler, before exiting:
/// let removed = cliper::abandon_saves();
/// eprintln!("interrupted; {removed} partial output(s) removed");
/// std::process::exit(130);
/// ```
pub fn abandon_saves() -> usize {
    let mut state = in_flight();
    state.abandoned = true;
    // Released on return; saves that start or reach their rename afterwards see `abandoned`.
    state.temporaries.drain(..).filter(|tmp| std::fs::remove_file(tmp).is_ok()).count()
}

/// A file written in full under a temporary name, waiting to be renamed over its destination; dropped
/// without [`commit`], it removes the temporary file.
pub(crate) struct PendingSave {
    tmp: PathBuf,
    path: PathBuf,
    committed: bool,
}

/// Writes `path`'s contents through `write` into a registered temporary file beside it, flushed to disk.
pub(crate) fn prepare(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::result::Result<(), String>,
) -> Result<PendingSave> {
    let (prepared, file) = prepare_open(path)?;
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    let mut out = BufWriter::new(file);
    write(&mut out).map_err(|reason| Error::Format { path: path.to_path_buf(), reason })?;
    out.flush().map_err(io)?;
    out.get_ref().sync_all().map_err(io)?;
    Ok(prepared)
}

/// A registered, empty temporary file beside `path`, open for writing (files written piece by piece: the
/// caller flushes and syncs it before [`commit`]).
pub(crate) fn prepare_open(path: &Path) -> Result<(PendingSave, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| Error::Format { path: path.to_path_buf(), reason: "not a file name to save to".into() })?;
    let tmp: PathBuf = path.with_file_name(format!(
        ".{name}.cliper-tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    {
        let mut state = in_flight();
        if state.abandoned {
            return Err(abandoned(path));
        }
        state.temporaries.push(tmp.clone());
    }
    // From here on, dropping `prepared` (on any error) removes the temporary file and its registration.
    let prepared = PendingSave { tmp, path: path.to_path_buf(), committed: false };
    let file = File::create(&prepared.tmp).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
    Ok((prepared, file))
}

/// Renames every prepared file over its destination, under the lock [`abandon_saves`] takes: all of them
/// or, when the run was abandoned first, none.
pub(crate) fn commit(mut files: Vec<PendingSave>) -> Result<()> {
    let result = {
        let mut state = in_flight();
        let mut result = Ok(());
        for file in &mut files {
            if state.abandoned {
                result = Err(abandoned(&file.path));
                break;
            }
            if let Err(source) = std::fs::rename(&file.tmp, &file.path) {
                result = Err(Error::Io { path: file.path.clone(), source });
                break;
            }
            file.committed = true;
            state.temporaries.retain(|t| t != &file.tmp);
        }
        result
    };
    // After the lock is released: the files not renamed remove their temporaries (their drop takes the lock).
    drop(files);
    result
}

impl Drop for PendingSave {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
            in_flight().temporaries.retain(|t| t != &self.tmp);
        }
    }
}

/// Writes a file through `write` into a temporary file beside `path`, flushed to disk, then renamed over
/// `path`: a failed or interrupted save leaves no partial file and the previous file untouched.
pub(crate) fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::result::Result<(), String>,
) -> Result<()> {
    commit(vec![prepare(path, write)?])
}
