//! Batches cut across cluster jobs: [`Shard`] (every N-th input of the sorted list, from `--shard I/N`, a Slurm
//! job array or a Kubernetes indexed job) and the inputs whose outputs already exist (`--skip-existing`), so a
//! re-submitted job does only what is missing or failed (docs/scaling.md).

use super::pipeline_file::Chain;
use super::run::{BatchInput, output_path};
use crate::error::{Error, Result};
use crate::io::{is_whole_pair, sweep_once};
use std::path::{Path, PathBuf};

/// Job `index` of `count` (0 ≤ index < count): it takes the inputs at positions index, index + count, … of the
/// sorted input list, so the shards of one list are disjoint and together are the whole list.
///
/// ```
/// use cliper::chain::Shard;
/// let shard: Shard = "1/3".parse()?;
/// let files: Vec<std::path::PathBuf> = (0..8).map(|i| format!("s{i}.npy").into()).collect();
/// assert_eq!(shard.select(files), vec![std::path::PathBuf::from("s1.npy"), "s4.npy".into(), "s7.npy".into()]);
/// assert!("3/3".parse::<Shard>().is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This job's index, from 0.
    pub index: usize,
    /// The number of jobs.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = Error;
    fn from_str(text: &str) -> Result<Shard> {
        let bad = || Error::invalid("shard", format!("`{text}` is not I/N with 0 ≤ I < N (e.g. 0/4)"));
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (usize, usize) =
            (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The shard a cluster scheduler gives this process, if any: a Slurm job array (`SLURM_ARRAY_TASK_ID` less
    /// `SLURM_ARRAY_TASK_MIN`, of `SLURM_ARRAY_TASK_COUNT`), or a Kubernetes indexed job (`JOB_COMPLETION_INDEX`,
    /// of `CLIPER_SHARDS`, which the Job sets to its completions). `None` outside a job array.
    ///
    /// ```
    /// let vars = [("SLURM_ARRAY_TASK_ID", "5"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "8")];
    /// let get = |name: &str| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string());
    /// assert_eq!(cliper::chain::Shard::from_vars(get)?, Some(cliper::chain::Shard { index: 4, count: 8 }));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Option<Shard>> {
        let number = |name: &str| -> Result<Option<usize>> {
            get(name)
                .filter(|v| !v.trim().is_empty())
                .map(|v| {
                    v.trim()
                        .parse::<usize>()
                        .map_err(|_| Error::invalid("shard", format!("{name}={v} is not a number")))
                })
                .transpose()
        };
        if let (Some(id), Some(count)) = (number("SLURM_ARRAY_TASK_ID")?, number("SLURM_ARRAY_TASK_COUNT")?) {
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let index = id.checked_sub(min).ok_or_else(|| {
                Error::invalid("shard", format!("SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}"))
            })?;
            return format!("{index}/{count}").parse().map(Some);
        }
        if let Some(index) = number("JOB_COMPLETION_INDEX")? {
            let count = number("CLIPER_SHARDS")?.ok_or_else(|| {
                Error::invalid(
                    "shard",
                    "JOB_COMPLETION_INDEX is set (a Kubernetes indexed job) but CLIPER_SHARDS is not: set it to the \
                     Job's completions",
                )
            })?;
            return format!("{index}/{count}").parse().map(Some);
        }
        Ok(None)
    }

    /// [`Shard::from_vars`] on this process's environment.
    pub fn from_env() -> Result<Option<Shard>> {
        Shard::from_vars(|name| std::env::var(name).ok())
    }

    /// This shard's files of `files`, sorted first (so every job of the array cuts the same list).
    pub fn select(&self, mut files: Vec<PathBuf>) -> Vec<PathBuf> {
        files.sort();
        files.into_iter().enumerate().filter(|(i, _)| i % self.count == self.index).map(|(_, f)| f).collect()
    }
}

impl Chain {
    /// The files of `batch` that still need running: those for which some output of the chain does not exist
    /// yet (saves are atomic, so an output that exists is complete — except a CFL pair, two files renamed one
    /// after the other, which counts only when whole: both files there and the data its header was written
    /// with); the others come back as skipped. The output folders' temporary files that killed runs left
    /// behind are removed on the way ([`crate::remove_stale_temporaries`]), though nothing may be written there.
    ///
    /// ```
    /// use cliper::chain::{BatchInput, Chain};
    /// let dir = std::env::temp_dir().join(format!("cliper-doc-skip-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// std::fs::write(dir.join("a.npy"), b"done")?;
    /// let text = format!("input = {{ x = 'scans/' }}\n[[step]]\nop = 'clip'\nmin = 0\nmax = 1\nin = 'x'\nout = 'y'\n\
    ///                     [output]\ny = '{}/'\n", dir.display());
    /// let chain = Chain::from_toml(&text, "c.toml".as_ref())?;
    /// let batch = BatchInput { input: 0, files: vec!["scans/a.npy".into(), "scans/b.npy".into()] };
    /// let (todo, skipped) = chain.missing(batch)?;
    /// assert_eq!((todo.files.len(), skipped.len()), (1, 1));
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn missing(&self, batch: BatchInput) -> Result<(BatchInput, Vec<PathBuf>)> {
        let mut todo = Vec::new();
        let mut skipped = Vec::new();
        for file in batch.files {
            let mut done = !self.outputs.is_empty();
            for (_, template, _) in &self.outputs {
                let output = output_path(template, Some(&file), true)?;
                sweep_once(output.parent().unwrap_or(Path::new("")));
                done &= is_complete(&output);
            }
            if done { skipped.push(file) } else { todo.push(file) }
        }
        Ok((BatchInput { input: batch.input, files: todo }, skipped))
    }
}

/// Whether an output file is there in full: a CFL pair whole, any other file present (saved atomically).
fn is_complete(output: &Path) -> bool {
    let cfl = output.extension().is_some_and(|e| e.eq_ignore_ascii_case("cfl") || e.eq_ignore_ascii_case("hdr"));
    if cfl { is_whole_pair(output) } else { output.exists() }
}
