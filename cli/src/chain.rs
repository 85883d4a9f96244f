//! The command line's side of running chains (the chains themselves are `cliper::chain`): which device, which
//! files a directory or glob names, a progress bar over a batch, and errors on one line.

use cliper::chain::{Chain, Outcome, Progress, RunRecord};
use cliper::{ClApp, Error, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Where the device comes from and what to print.
pub struct Context {
    pub device: Option<String>,
    pub profile: bool,
    pub json: bool,
    app: Option<ClApp>,
}

impl Context {
    pub fn new(device: Option<String>, profile: bool, json: bool) -> Context {
        Context { device, profile, json, app: None }
    }

    /// The device, opened on first use (`--device`, else `CLIPER_DEVICE`, else the best one).
    pub fn app(&mut self) -> Result<ClApp> {
        if let Some(app) = &self.app {
            return Ok(app.clone());
        }
        let builder = ClApp::builder().profiling(true);
        let app = match &self.device {
            Some(spec) => builder.select(spec).build()?,
            None => builder.use_env(true).build()?,
        };
        self.app = Some(app.clone());
        Ok(app)
    }
}

/// The entries of a folder, or an error naming it.
fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(std::fs::read_dir(dir)
        .map_err(|source| Error::Io { path: dir.to_path_buf(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect())
}

/// Whether `dir` holds DICOM files: it is then one DICOM series, one input.
fn is_series(dir: &Path) -> bool {
    dir.is_dir() && entries(dir).is_ok_and(|e| e.iter().any(cliper::is_dicom_file))
}

/// Inputs a batch names: a directory's files with a known extension and its DICOM series folders, or a glob's
/// matches, sorted; `None` for a single file, a folder that is itself a DICOM series, or a glob naming DICOM files
/// only (`scan/IM*`: one series).
pub fn batch_files(spec: &str) -> Result<Option<Vec<PathBuf>>> {
    let path = Path::new(spec);
    let known = |p: &Path| {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_ascii_lowercase();
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
        ["npy", "cfl", "png", "tif", "tiff", "mat", "nii", "nrrd", "nhdr", "mha", "mhd"].contains(&ext.as_str())
            || name.ends_with(".nii.gz")
            || cliper::is_dicom_file(p)
    };
    let mut files: Vec<PathBuf> = if path.is_dir() {
        if is_series(path) {
            return Ok(None);
        }
        entries(path)?.into_iter().filter(|p| (p.is_file() && known(p)) || is_series(p)).collect()
    } else if spec.contains(['*', '?', '[']) {
        let matches: Vec<PathBuf> = glob::glob(spec)
            .map_err(|e| Error::invalid("batch input", format!("`{spec}` is not a valid glob: {e}")))?
            .filter_map(|p| p.ok())
            .filter(|p| p.is_file() || is_series(p))
            .collect();
        // `scan/IM*` naming DICOM files only, wildcards in the file name only: one series, as its folder would be.
        let in_name_only = !path.parent().is_some_and(|d| d.to_string_lossy().contains(['*', '?', '[']));
        if in_name_only && !spec.contains('[') && !matches.is_empty() && matches.iter().all(cliper::is_dicom_file) {
            return Ok(None);
        }
        matches
    } else {
        return Ok(None);
    };
    files.sort();
    if files.is_empty() {
        return Err(Error::invalid("batch input", format!("`{spec}` names no image or array files")));
    }
    Ok(Some(files))
}

/// Runs `chain` on the context's device: once, or once per file of its batch input with a progress bar on a
/// terminal, each failing file named on stderr as it fails and `finished` told of each file as it ends.
pub fn run(ctx: &mut Context, chain: &Chain, finished: impl Fn(&RunRecord)) -> Result<Outcome> {
    let batch = chain.batch_input(batch_files)?;
    let app = ctx.app()?;
    let bar = match &batch {
        Some(b) if std::io::stdout().is_terminal() => {
            let bar = ProgressBar::new(b.files.len() as u64);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {wide_msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        }
        _ => ProgressBar::hidden(),
    };
    let outcome = chain.run(&app, batch.as_ref(), ctx.profile, |event| match event {
        Progress::Starting(file) => bar.set_message(file.display().to_string()),
        Progress::Finished(record) => {
            if let (Some(e), Some(file)) = (&record.error, &record.input) {
                bar.suspend(|| eprintln!("error: {}", naming(&file.display().to_string(), e)));
            }
            bar.suspend(|| finished(record));
            bar.inc(1);
        }
    });
    bar.finish_and_clear();
    outcome
}

/// The error on one line (the library's messages may span lines: build logs), unless CLIPER_VERBOSE is set.
pub fn one_line(e: &cliper::Error) -> String {
    let text = e.to_string();
    if std::env::var_os("CLIPER_VERBOSE").is_some() {
        return text;
    }
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().to_string();
    match lines.count() {
        0 => first,
        n => format!("{first} (+{n} lines of detail: set CLIPER_VERBOSE=1 to see them)"),
    }
}

/// The error on one line, preceded by the file it concerns unless the message names it already.
pub fn naming(file: &str, e: &cliper::Error) -> String {
    let text = one_line(e);
    if text.contains(file) { text } else { format!("{file}: {text}") }
}
