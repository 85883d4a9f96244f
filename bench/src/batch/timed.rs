//! What the batch benchmark runs and times: the `cliper` process (with its peak resident memory), the Python
//! peers, and the copy limit — reading every input and writing the outputs' bytes once, on every core.

use cliper::{Error, Result};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How often the peak resident size of the running `cliper` is read: often enough that the last reading before
/// it exits is close to its end (VmHWM only grows, so a late reading loses nothing but the last few ms).
const RSS_POLL: Duration = Duration::from_millis(5);

/// What one `cliper run` took.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProcessRun {
    /// From spawning the process to its exit, seconds.
    pub(crate) wall_s: f64,
    /// The process's resident-set high-water mark (VmHWM), bytes; `None` where `/proc` does not say.
    pub(crate) peak_rss: Option<u64>,
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

/// Runs `command` to its end with stdout and stderr into `log`, polling its peak resident size; an error naming
/// the log's last line when it exits non-zero.
pub(crate) fn run_with_peak_rss(mut command: Command, log: &Path) -> Result<ProcessRun> {
    let file = std::fs::File::create(log).map_err(io_error(log))?;
    let err = file.try_clone().map_err(io_error(log))?;
    // Into a file, not a pipe: a pipe nobody drains while polling would stall a chatty run.
    command.stdout(Stdio::from(file)).stderr(Stdio::from(err)).stdin(Stdio::null());
    let program = PathBuf::from(command.get_program());
    let start = Instant::now();
    let mut child = command.spawn().map_err(io_error(&program))?;
    let status_file = PathBuf::from(format!("/proc/{}/status", child.id()));
    let mut peak_rss = None;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io_error(&program))? {
            break status;
        }
        if let Some(hwm) = std::fs::read_to_string(&status_file).ok().and_then(|text| vm_hwm(&text)) {
            peak_rss = Some(hwm);
        }
        std::thread::sleep(RSS_POLL);
    };
    let wall_s = start.elapsed().as_secs_f64();
    if !status.success() {
        return Err(Error::invalid(
            program.display().to_string(),
            format!("{status}: {} (log: {})", last_line(log), log.display()),
        ));
    }
    Ok(ProcessRun { wall_s, peak_rss })
}

/// VmHWM of a `/proc/PID/status` text, in bytes.
pub(crate) fn vm_hwm(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// The last non-empty line of a log file (for one-line errors).
fn last_line(log: &Path) -> String {
    std::fs::read_to_string(log)
        .ok()
        .and_then(|text| text.lines().rev().find(|l| !l.trim().is_empty()).map(str::to_string))
        .unwrap_or_else(|| "(no output)".into())
}

/// A peer's run as `peer_batch.py run` reports it.
#[derive(Clone, Debug)]
pub(crate) struct PeerRun {
    /// Its own line (`scipy-pool2 batch-ct 8files 1234.5 ms  6.48 files/s`).
    pub(crate) line: String,
    /// Its time for the batch, seconds: from the first file's read to the last file's write, as the script
    /// measures it (interpreter start and CuPy's first kernel build excluded).
    pub(crate) batch_s: f64,
    /// The whole Python process, seconds.
    pub(crate) process_s: f64,
}

/// Runs `python script args…` and returns its stdout; an error with its stderr's last line when it fails.
pub(crate) fn python(python: &Path, script: &Path, args: &[&std::ffi::OsStr]) -> Result<(String, f64)> {
    let start = Instant::now();
    let out = Command::new(python).arg(script).args(args).stdin(Stdio::null()).output().map_err(io_error(python))?;
    let seconds = start.elapsed().as_secs_f64();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(no output)");
        return Err(Error::invalid(
            format!("{} {}", python.display(), script.display()),
            format!("{}: {last}", out.status),
        ));
    }
    Ok((String::from_utf8_lossy(&out.stdout).into_owned(), seconds))
}

/// The peer's line in `stdout`: the one starting with `who batch-CASE` and naming `files` files.
pub(crate) fn parse_peer_line(stdout: &str, who: &str, case: &str, files: usize) -> Result<(String, f64)> {
    let tag = format!("batch-{case}");
    let line = stdout
        .lines()
        .find(|l| l.split_whitespace().take(2).eq([who, tag.as_str()]))
        .ok_or_else(|| Error::invalid("peer_batch.py", format!("no line `{who} {tag} …` in its output: {stdout:?}")))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let count = words.get(2).and_then(|w| w.strip_suffix("files")).and_then(|n| n.parse::<usize>().ok());
    let ms = words.get(3).and_then(|w| w.parse::<f64>().ok());
    match (count, ms) {
        (Some(n), Some(ms)) if n == files && ms > 0.0 => Ok((line.trim().to_string(), ms / 1e3)),
        _ => Err(Error::invalid("peer_batch.py", format!("`{line}`: expected {files} files and a time in ms"))),
    }
}

/// Whether CuPy imports and sees a GPU: `Err` with the reason (the error's last line) when not.
pub(crate) fn cupy_ready(python: &Path) -> std::result::Result<(), String> {
    let probe = "import cupy\nassert cupy.cuda.runtime.getDeviceCount() > 0, 'CuPy sees no GPU'";
    match Command::new(python).args(["-c", probe]).stdin(Stdio::null()).output() {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            Err(stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("CuPy failed").trim().to_string())
        }
        Err(e) => Err(format!("{}: {e}", python.display())),
    }
}

/// The plain files under `dir` (in sub-folders too), sorted, hidden ones left out as cliper leaves them out.
pub(crate) fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).map_err(io_error(&folder))? {
            let entry = entry.map_err(io_error(&folder))?;
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            let kind = entry.file_type().map_err(io_error(&folder))?;
            if kind.is_dir() {
                folders.push(entry.path());
            } else if kind.is_file() {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The size of each file, in order.
pub(crate) fn sizes(files: &[PathBuf]) -> Result<Vec<u64>> {
    files.iter().map(|f| std::fs::metadata(f).map(|m| m.len()).map_err(io_error(f))).collect()
}

/// Reads every file once, so every timed run finds the inputs in the page cache; the bytes read.
pub(crate) fn warm_page_cache(files: &[PathBuf]) -> Result<u64> {
    let mut bytes = 0;
    for file in files {
        bytes += std::fs::read(file).map_err(io_error(file))?.len() as u64;
    }
    Ok(bytes)
}

/// The copy limit: every input read once and `output_sizes` bytes written into as many new files in `dest`,
/// spread over `threads` threads that take the next file when free (as a batch tool on every core would), with
/// `fsync` after each write when asked (what cliper's saves do before their rename). Seconds.
pub(crate) fn copy_once(
    inputs: &[PathBuf],
    output_sizes: &[u64],
    dest: &Path,
    threads: usize,
    fsync: bool,
) -> Result<f64> {
    std::fs::create_dir_all(dest).map_err(io_error(dest))?;
    let largest = output_sizes.iter().copied().max().unwrap_or(0) as usize;
    let jobs = inputs.len().max(output_sizes.len());
    let next = AtomicUsize::new(0);
    // What each thread writes, made before the clock starts: memory it touched (not the shared zero page).
    let patterns = vec![vec![0x5a_u8; largest]; threads.max(1)];
    let start = Instant::now();
    let results: Vec<Result<()>> = std::thread::scope(|scope| {
        let workers: Vec<_> = patterns
            .iter()
            .map(|pattern| {
                let next = &next;
                scope.spawn(move || {
                    loop {
                        let job = next.fetch_add(1, Ordering::Relaxed);
                        if job >= jobs {
                            return Ok(());
                        }
                        if let Some(input) = inputs.get(job) {
                            std::hint::black_box(std::fs::read(input).map_err(io_error(input))?);
                        }
                        if let Some(&size) = output_sizes.get(job) {
                            let bytes = pattern.get(..size as usize).unwrap_or(pattern);
                            write_file(&dest.join(format!("copy{job:05}")), bytes, fsync)?;
                        }
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err(Error::invalid("copy limit", "a copying thread panicked"))))
            .collect()
    });
    let seconds = start.elapsed().as_secs_f64();
    results.into_iter().collect::<Result<Vec<()>>>()?;
    Ok(seconds)
}

fn write_file(path: &Path, bytes: &[u8], fsync: bool) -> Result<()> {
    use std::io::Write;
    let mut file = std::fs::File::create(path).map_err(io_error(path))?;
    file.write_all(bytes).map_err(io_error(path))?;
    if fsync {
        file.sync_all().map_err(io_error(path))?;
    }
    Ok(())
}

/// Removes a folder and what it holds; one that is not there is fine.
pub(crate) fn remove_dir(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::Io { path: dir.to_path_buf(), source: e }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vm_hwm_is_read_in_bytes() {
        let status = "Name:\tcliper\nVmPeak:\t  900 kB\nVmHWM:\t   12345 kB\nVmRSS:\t  100 kB\n";
        assert_eq!(vm_hwm(status), Some(12345 * 1024));
        assert_eq!(vm_hwm("Name:\tzombie\n"), None);
    }

    #[test]
    fn peer_lines_are_matched_by_tool_case_and_count() {
        let out = "scipy-pool2 batch-ct 8files 1234.5 ms  6.48 files/s\n";
        assert_eq!(parse_peer_line(out, "scipy-pool2", "ct", 8).unwrap().1, 1.2345);
        assert!(parse_peer_line(out, "scipy", "ct", 8).is_err());
        assert!(parse_peer_line(out, "scipy-pool2", "ct", 7).unwrap_err().to_string().contains("expected 7 files"));
    }
}
