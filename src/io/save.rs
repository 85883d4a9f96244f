//! Saves that never leave a partial file: each file is written to a temporary name beside its destination,
//! flushed to disk, then renamed over it (keeping the permission bits of a file it replaces). Temporary files in
//! flight are registered, so an interrupted run ([`abandon_saves`], which the CLI calls on SIGINT and SIGTERM)
//! removes them and renames nothing more. A run killed outright (`kill -9`, a lost node) cannot: its temporary
//! files name the machine and process that wrote them, and the next run that saves into their folder removes
//! those whose writer is gone ([`remove_stale_temporaries`]).

use crate::error::{Error, Result};
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};

/// What every temporary file's name holds between the destination's name and its writer: `.<name>` +
/// `TEMPORARY_MARK` + `<machine>-<pid>-<n>`.
const TEMPORARY_MARK: &str = ".cliper-tmp-";

/// A temporary file left unmodified this long is abandoned, whoever wrote it: writers write and rename without
/// pause, so only the temporaries of other machines (whose processes cannot be asked about) wait this long.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The machine part of temporary names when this machine cannot name itself (only age removes those files).
const UNKNOWN_MACHINE: &str = "unknown";

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
    if let Some(folder) = path.parent() {
        sweep_once(folder);
    }
    let tmp: PathBuf = path.with_file_name(format!(
        ".{name}{TEMPORARY_MARK}{}-{}-{}",
        this_machine().unwrap_or(UNKNOWN_MACHINE),
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
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    // Readable too: a streamed output maps it ([`crate::app::ffi::MappedFile`]), which takes a file open both ways.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&prepared.tmp)
        .map_err(io)?;
    // A file replaced keeps its mode, as `cp` onto an existing file does (a new one has the umask's default,
    // which opening gives the temporary file). The open handle writes on even when the mode is read-only.
    if let Ok(existing) = std::fs::metadata(path)
        && existing.is_file()
    {
        file.set_permissions(existing.permissions()).map_err(io)?;
    }
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

/// This machine as temporary names give it: the host name and the process-id namespace (`myhost~4026531836`), so
/// that a process id is only ever looked up where it means the same process — containers that share a host
/// name (Docker's `--network host`) have namespaces of their own. `None` where either cannot be read (outside
/// Linux): then this process's temporaries say `unknown` and only age removes them.
fn this_machine() -> Option<&'static str> {
    static MACHINE: OnceLock<Option<String>> = OnceLock::new();
    MACHINE
        .get_or_init(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").ok()?;
            let host: String = host
                .trim()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-' { c } else { '_' })
                .collect();
            // The link reads `pid:[4026531836]`.
            let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
            let namespace: String = namespace.to_string_lossy().chars().filter(char::is_ascii_digit).collect();
            (!host.is_empty() && !namespace.is_empty()).then(|| format!("{host}~{namespace}"))
        })
        .as_deref()
}

/// Who wrote a temporary file, from its name: the machine (`None` for names of cliper versions before the
/// machine was named) and the process id.
#[derive(Debug, PartialEq)]
struct Writer<'a> {
    machine: Option<&'a str>,
    pid: u32,
}

/// The writer of `file_name` when it is one of cliper's temporary names (`.<name>.cliper-tmp-<machine>-<pid>-<n>`
/// or the older `.<name>.cliper-tmp-<pid>-<n>`), else `None`.
fn temporary_writer(file_name: &str) -> Option<Writer<'_>> {
    if !file_name.starts_with('.') {
        return None;
    }
    let (_, tail) = file_name.rsplit_once(TEMPORARY_MARK)?;
    let mut parts = tail.rsplitn(3, '-');
    let counter = parts.next()?;
    let pid = parts.next()?;
    if counter.is_empty() || !counter.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let pid = pid.parse().ok()?;
    Some(Writer { machine: parts.next(), pid })
}

/// Whether the process `pid` of this machine has ended: `/proc/<pid>` is gone. Where there is no `/proc` it
/// cannot be told, and the answer is no (the file waits for [`STALE_AFTER`]).
fn has_ended(pid: u32) -> bool {
    Path::new("/proc/self").exists() && !Path::new("/proc").join(pid.to_string()).exists()
}

/// Whether a temporary file of `writer`, last modified `age` ago, is abandoned: written by a process of this
/// machine that has ended (or by this process but not in flight: an earlier process that had its id), or
/// untouched for [`STALE_AFTER`] whoever wrote it.
fn abandoned_temporary(writer: &Writer, age: Duration, in_flight: bool) -> bool {
    if in_flight {
        return false;
    }
    if age >= STALE_AFTER {
        return true;
    }
    match (writer.machine, this_machine()) {
        (Some(theirs), Some(ours)) if theirs == ours => writer.pid == std::process::id() || has_ended(writer.pid),
        _ => false,
    }
}

/// Removes the temporary files in `folder` that interrupted saves left behind — those whose writer on this
/// machine has ended, and any untouched for a day (another machine's, whose processes cannot be asked about) —
/// and gives how many. The temporaries of saves in flight, here or on another live machine sharing the folder,
/// stay. Every save runs it once per folder and process; `--skip-existing` runs it on the output folders too.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("cliper-doc-stale-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let old = dir.join(".x.npy.cliper-tmp-elsewhere~1-4242-0"); // another machine's, a day and more old
/// std::fs::File::create(&old)?.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(90_000))?;
/// let fresh = dir.join(".y.npy.cliper-tmp-elsewhere~1-4242-1"); // in flight there, maybe
/// std::fs::write(&fresh, b"")?;
/// assert_eq!(cliper::remove_stale_temporaries(&dir)?, 1);
/// assert!(!old.exists() && fresh.exists());
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn remove_stale_temporaries(folder: &Path) -> Result<usize> {
    let listed = match std::fs::read_dir(if folder.as_os_str().is_empty() { Path::new(".") } else { folder }) {
        Ok(listed) => listed,
        // A folder not made yet holds nothing to remove.
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(0),
        Err(source) => return Err(Error::Io { path: folder.to_path_buf(), source }),
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in listed.flatten() {
        let name = entry.file_name();
        let Some(writer) = name.to_str().and_then(temporary_writer) else { continue };
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let age = meta.modified().ok().and_then(|m| now.duration_since(m).ok()).unwrap_or_default();
        let path = entry.path();
        let in_flight = in_flight().temporaries.contains(&path);
        // Another run may have removed it meanwhile: only removals made here count.
        if abandoned_temporary(&writer, age, in_flight) && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

/// [`remove_stale_temporaries`] on `folder`, the first time this process saves there; a folder that cannot be
/// listed is left as it is (the save itself then says what is wrong).
pub(crate) fn sweep_once(folder: &Path) {
    static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let first = {
        // A set of paths is whole after every insert: a poisoned lock is still right to use.
        let mut swept = SWEPT.lock().unwrap_or_else(|p| p.into_inner());
        swept.get_or_insert_with(HashSet::new).insert(folder.to_path_buf())
    };
    if first {
        let _ = remove_stale_temporaries(folder);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_give_their_writer() {
        let writer = |machine, pid| Some(Writer { machine, pid });
        assert_eq!(
            temporary_writer(".a-b.nii.gz.cliper-tmp-node-7.cluster~4026531836-123-4"),
            writer(Some("node-7.cluster~4026531836"), 123)
        );
        assert_eq!(temporary_writer(".x.npy.cliper-tmp-99-0"), writer(None, 99));
        assert_eq!(temporary_writer("x.npy.cliper-tmp-99-0"), None);
        assert_eq!(temporary_writer(".x.npy"), None);
        assert_eq!(temporary_writer(".x.npy.cliper-tmp-me-99-"), None);
    }

    #[test]
    fn only_ended_or_old_writers_are_abandoned() {
        let here = this_machine();
        let ours = Writer { machine: here, pid: std::process::id() };
        let other = Writer { machine: Some("elsewhere~1"), pid: std::process::id() };
        let fresh = Duration::from_secs(1);
        assert!(!abandoned_temporary(&ours, fresh, true), "a save in flight stays");
        assert!(!abandoned_temporary(&ours, STALE_AFTER, true), "however long it takes");
        assert!(!abandoned_temporary(&other, fresh, false), "another machine's fresh file stays");
        assert!(abandoned_temporary(&other, STALE_AFTER, false));
        if here.is_some() {
            assert!(abandoned_temporary(&ours, fresh, false), "this process's, not in flight: an earlier process's");
        }
    }
}
