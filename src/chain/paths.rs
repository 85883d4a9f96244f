//! Every file a run reads and writes, known before anything runs: to refuse a run whose output would overwrite one
//! of its inputs (an image, a filter or footprint file, the pipeline file, the manifest) or whose outputs would
//! overwrite each other, and to list them (`cliper run --dry-run`).
//!
//! Two names are one file when they resolve to the same file: the same canonical path (symbolic links and `..`
//! followed) or, for files that exist, the same device and inode (hard links). A BART pair `x.cfl`/`x.hdr` is one
//! file under either name; a MAT file's variables are separate (`m.mat:A` read and `m.mat:C` written is allowed:
//! writing adds a variable), so a MAT output collides only with the same variable.

use super::any_data::FileSpec;
use super::pipeline_file::Chain;
use super::run::{BatchInput, output_path};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The files of a run: what each is for (`input x`, `kernel`, `output y of scan3.nii`, …) and its path as given.
///
/// ```
/// use cliper::chain::{Chain, RunFiles};
/// let text = "input = { x = 'data/phantom_256.png' }\noutput = { y = 'data/phantom_256.png' }\n\
///             [[step]]\nop = 'clip'\nmin = 0\nmax = 100\nin = 'x'\nout = 'y'";
/// let chain = Chain::from_toml(text, "clip.toml".as_ref())?;
/// let files = chain.run_files(None)?;
/// assert_eq!(files.reads.len(), 1);
/// let refused = files.check().unwrap_err().to_string();
/// assert!(refused.contains("would overwrite the input"), "{refused}");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunFiles {
    /// Files read: role and path (with a MAT variable as `FILE.mat:VAR`).
    pub reads: Vec<(String, String)>,
    /// Files written: role and path.
    pub writes: Vec<(String, String)>,
}

impl RunFiles {
    /// Adds a file the run reads (the pipeline file, a coil-map file, …).
    pub fn read(mut self, role: &str, path: &Path) -> RunFiles {
        self.reads.push((role.into(), path.display().to_string()));
        self
    }

    /// Adds a file the run writes (the manifest, …).
    pub fn write(mut self, role: &str, path: &Path) -> RunFiles {
        self.writes.push((role.into(), path.display().to_string()));
        self
    }

    /// Refuses, naming both roles and the file, a write that is one of the reads or another write; nothing is
    /// touched.
    pub fn check(&self) -> Result<()> {
        let reads: Vec<(FileId, &str, &str)> =
            self.reads.iter().map(|(role, path)| (FileId::of(path), role.as_str(), path.as_str())).collect();
        let mut written: Vec<(FileId, &str, &str)> = Vec::with_capacity(self.writes.len());
        for (role, path) in &self.writes {
            let id = FileId::of(path);
            if let Some((_, read, read_path)) = reads.iter().find(|(other, _, _)| id.same_as(other)) {
                return Err(Error::invalid(
                    "outputs",
                    format!(
                        "{role} ({path}) would overwrite {read} ({read_path}): nothing was run — write somewhere else"
                    ),
                ));
            }
            if let Some((_, other, other_path)) = written.iter().find(|(other, _, _)| id.same_as(other)) {
                return Err(Error::invalid(
                    "outputs",
                    format!(
                        "outputs collide: {other} ({other_path}) and {role} ({path}) are one file; nothing was run — \
                         write to a directory (keeps each file's name) or rename"
                    ),
                ));
            }
            written.push((id, role, path));
        }
        Ok(())
    }
}

/// What makes two names one file.
#[derive(Debug)]
struct FileId {
    /// Device and inode, when the file exists.
    inode: Option<(u64, u64)>,
    /// The canonical path (of the folder when the file does not exist yet), `.hdr` of a BART pair as `.cfl`.
    path: PathBuf,
    /// The MAT variable, when one was named.
    variable: Option<String>,
}

impl FileId {
    fn of(text: &str) -> FileId {
        let spec = FileSpec::parse(text);
        let path = bart_pair(&spec.path);
        FileId { inode: inode(&path), path: canonical(&path), variable: spec.variable }
    }

    fn same_as(&self, other: &FileId) -> bool {
        let same_file = match (self.inode, other.inode) {
            (Some(a), Some(b)) => a == b,
            _ => self.path == other.path,
        };
        // A MAT file's variables are separate outputs; a whole-file read or write covers all of them.
        same_file && (self.variable.is_none() || other.variable.is_none() || self.variable == other.variable)
    }
}

/// `x.hdr` as `x.cfl`: a BART pair is one file.
fn bart_pair(path: &Path) -> PathBuf {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("hdr") => path.with_extension("cfl"),
        _ => path.to_path_buf(),
    }
}

#[cfg(unix)]
fn inode(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn inode(_path: &Path) -> Option<(u64, u64)> {
    None
}

/// A path in a form two spellings of one file share: canonical where the file or its folder exists.
fn canonical(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (path.parent().map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d }), path.file_name()) {
        (Some(dir), Some(name)) => dir.canonicalize().map_or_else(|_| path.to_path_buf(), |d| d.join(name)),
        _ => path.to_path_buf(),
    }
}

impl Chain {
    /// Every file this chain reads and writes — its inputs (each file of `batch`), the filter, footprint and
    /// structure files its steps name, and each output of each run — for [`RunFiles::check`] before anything runs,
    /// and for listing (`cliper run --dry-run`).
    pub fn run_files(&self, batch: Option<&BatchInput>) -> Result<RunFiles> {
        let mut files = RunFiles::default();
        // A one-input chain's input is "the input" (a subcommand's); a pipeline's are named.
        let input = |name: &str| if self.inputs.len() == 1 { "the input".to_string() } else { format!("input {name}") };
        for (i, (name, spec)) in self.inputs.iter().enumerate() {
            match batch {
                Some(b) if b.input == i => {
                    files.reads.extend(b.files.iter().map(|f| (input(name), f.display().to_string())));
                }
                _ => files.reads.push((input(name), spec.clone())),
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            for (what, file) in step.op.files() {
                let role =
                    if self.steps.len() > 1 { format!("the {what} of step {}", i + 1) } else { format!("the {what}") };
                files.reads.push((role, file.to_string()));
            }
        }
        let runs: Vec<Option<&Path>> = match batch {
            Some(b) => b.files.iter().map(|f| Some(f.as_path())).collect(),
            None => vec![None],
        };
        for file in runs {
            for (name, template, _) in &self.outputs {
                let path = output_path(template, file, batch.is_some())?;
                let output = if self.outputs.len() == 1 { "the output".to_string() } else { format!("output {name}") };
                let role = match file {
                    Some(f) => format!("{output} of {}", f.display()),
                    None => output,
                };
                files.writes.push((role, path.display().to_string()));
            }
        }
        Ok(files)
    }
}
