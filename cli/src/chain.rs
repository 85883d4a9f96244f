//! The command line's side of running chains (the chains themselves are `cliper::chain`): which device, which
//! files a directory or glob names, a progress bar over a batch, and errors on one line.

use cliper::DevicePool;
use cliper::chain::{
    BatchInput, Chain, FileSpec, Outcome, Progress, RunFiles, RunRecord, Shard, TileInput, TileProgress,
};
use cliper::{ClApp, Error, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Where the device comes from and what to print.
pub struct Context {
    pub device: Option<String>,
    /// `--devices`: a batch spread over this set of devices (`all`, `gpu:*`, `0:0,0:1`).
    pub devices: Option<String>,
    /// `--shard I/N`: this job's share of a batch (else a Slurm or Kubernetes job array's, if any).
    pub shard: Option<String>,
    /// `--skip-existing`: batch files whose outputs all exist are not run again.
    pub skip_existing: bool,
    /// `--manifest FILE`: one JSON line per batch file appended as it ends.
    pub manifest: Option<PathBuf>,
    /// The pipeline file of `cliper run`: read, so never an output.
    pub pipeline: Option<PathBuf>,
    pub profile: bool,
    pub json: bool,
    app: Option<ClApp>,
}

impl Context {
    pub fn new(device: Option<String>, profile: bool, json: bool) -> Context {
        Context {
            device,
            devices: None,
            shard: None,
            skip_existing: false,
            manifest: None,
            pipeline: None,
            profile,
            json,
            app: None,
        }
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

/// Whether `dir` is one DICOM series, one input: it holds DICOM files and no other image or array file (hidden
/// files, DICOMDIR and files of other kinds — notes, spreadsheets — aside). A folder of images with one stray `.dcm`
/// among them is a batch, the `.dcm` one of its files.
fn is_series(dir: &Path) -> bool {
    let Ok(files) = entries(dir) else { return false };
    let visible = |p: &&PathBuf| !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'));
    dir.is_dir()
        && files.iter().filter(visible).any(cliper::is_dicom_file)
        && !files.iter().filter(visible).any(|p| p.is_file() && is_array_file(p) && !cliper::is_dicom_file(p))
}

/// Whether `path` names a file of a format cliper reads by extension (not DICOM, whose files need no extension).
fn is_array_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_ascii_lowercase();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    ["npy", "cfl", "png", "tif", "tiff", "mat", "nii", "nrrd", "nhdr", "mha", "mhd"].contains(&ext.as_str())
        || name.ends_with(".nii.gz")
}

/// Inputs a batch names: a directory's files with a known extension and its DICOM series folders, or a glob's
/// matches, sorted; `None` for a single file, a folder that is itself a DICOM series, or a glob naming DICOM files
/// only (`scan/IM*`: one series).
pub fn batch_files(spec: &str) -> Result<Option<Vec<PathBuf>>> {
    let path = Path::new(spec);
    let known = |p: &Path| is_array_file(p) || cliper::is_dicom_file(p);
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

/// Every file `chain` reads and writes (each file of its batch, its filter and structure files, the pipeline file,
/// the manifest): checked before anything runs, so that no output overwrites an input or another output.
pub fn run_files(ctx: &Context, chain: &Chain, batch: Option<&BatchInput>) -> Result<RunFiles> {
    let mut files = chain.run_files(batch)?;
    if let Some(pipeline) = &ctx.pipeline {
        files = files.read("the pipeline file", pipeline);
    }
    if let Some(manifest) = &ctx.manifest {
        files = files.write("the manifest", manifest);
    }
    Ok(files)
}

/// The batch `chain` names (`None` for a single run), with every file of the run checked distinct ([`run_files`])
/// before anything is opened for writing: its files sorted, this job's shard of them (`--shard`, or a Slurm or
/// Kubernetes job array's), less those whose outputs exist under `--skip-existing` (given apart).
pub fn select_batch(ctx: &Context, chain: &Chain) -> Result<(Option<BatchInput>, Vec<PathBuf>)> {
    let batch = chain.batch_input(batch_files)?;
    run_files(ctx, chain, batch.as_ref())?.check()?;
    let shard = match &ctx.shard {
        Some(text) if batch.is_none() => {
            return Err(Error::invalid("--shard", format!("`{text}` cuts a batch; give a directory or glob input")));
        }
        Some(text) => Some(text.parse::<Shard>()?),
        None => Shard::from_env()?,
    };
    let Some(b) = batch else { return Ok((None, Vec::new())) };
    let b = match shard {
        Some(s) => BatchInput { input: b.input, files: s.select(b.files) },
        None => b,
    };
    if !ctx.skip_existing {
        return Ok((Some(b), Vec::new()));
    }
    let (todo, skipped) = chain.missing(b)?;
    Ok((Some(todo), skipped))
}

/// The batch ([`select_batch`]) and the manifest, opened once the files are checked, with the files skipped under
/// `--skip-existing` written to it and said on stderr. Only the `lead` process (rank 0 of an MPI job, or the only
/// one) writes the manifest and speaks.
pub fn prepare_batch(ctx: &Context, chain: &Chain, lead: bool) -> Result<(Option<BatchInput>, Manifest)> {
    let (batch, skipped) = select_batch(ctx, chain)?;
    let manifest = Manifest::open(if lead { ctx.manifest.as_deref() } else { None })?;
    if lead && !skipped.is_empty() {
        eprintln!("skipping {} file(s) whose outputs exist (--skip-existing)", skipped.len());
    }
    skipped.iter().try_for_each(|f| manifest.skipped(f))?;
    Ok((batch, manifest))
}

/// Runs `chain` on the context's device: once, or once per file of its batch input with a progress bar on a
/// terminal, each failing file named on stderr as it fails and `finished` told of each file as it ends.
pub fn run(ctx: &mut Context, chain: &Chain, finished: impl Fn(&RunRecord)) -> Result<Outcome> {
    let (batch, manifest) = prepare_batch(ctx, chain, true)?;
    let finished = |record: &RunRecord, device: &str, seconds: f64| {
        if let Err(e) = manifest.record(record, device, seconds) {
            eprintln!("error: {}", one_line(&e));
        }
        finished(record);
    };
    let outcome = run_batch(ctx, chain, batch.as_ref(), finished);
    // A manifest that could not be written fails the run: a job's log must not silently miss files.
    manifest.finish()?;
    outcome
}

/// Runs `chain` once or over `batch`: on the devices of `--devices`, in tiles when a single input does not fit the
/// device, or file after file on the context's device.
fn run_batch(
    ctx: &mut Context,
    chain: &Chain,
    batch: Option<&BatchInput>,
    finished: impl Fn(&RunRecord, &str, f64),
) -> Result<Outcome> {
    if let (Some(spec), Some(batch)) = (ctx.devices.clone(), batch) {
        return run_on_devices(ctx, chain, batch, &spec, finished);
    }
    let app = ctx.app()?;
    let device = format!("{} {}", app.device().id(), app.device().name);
    // When each file started on the device: files overlap (the next starts while the last is written).
    let started = std::cell::RefCell::new(std::collections::HashMap::<PathBuf, std::time::Instant>::new());
    if batch.is_none()
        && !ctx.profile
        && let Some(input) = too_large(chain, &app)?
    {
        return run_tiled(ctx, chain, &app, input);
    }
    let bar = match batch {
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
    // A single run that ran out of device memory runs again in tiles (compressed files say nothing of their
    // size before they are read: the first attempt is the measure).
    let single = batch.is_none() && chain.inputs.len() == 1 && !ctx.profile;
    let retry = std::cell::Cell::new(false);
    let lanes = match batch {
        Some(b) => lanes_on(&app, &b.files)?,
        None => vec![app.clone()],
    };
    let report = |event: Progress<'_>| match event {
        Progress::Starting(file) => {
            started.borrow_mut().insert(file.to_path_buf(), std::time::Instant::now());
            bar.set_message(file.display().to_string())
        }
        Progress::Finished(record) => {
            if single && matches!(record.error, Some(cliper::Error::OutOfMemory { .. })) {
                retry.set(true);
                return;
            }
            if let (Some(e), Some(file)) = (&record.error, &record.input) {
                bar.suspend(|| eprintln!("error: {}", naming(&file.display().to_string(), e)));
            }
            let began = record.input.as_ref().and_then(|f| started.borrow_mut().remove(f));
            let seconds = began.map_or(0.0, |t| t.elapsed().as_secs_f64());
            bar.suspend(|| finished(record, &device, seconds));
            bar.inc(1);
        }
    };
    let outcome = match batch {
        Some(b) => chain.run_on_lanes(&lanes, b, ctx.profile, report),
        None => chain.run(&app, None, ctx.profile, report),
    };
    bar.finish_and_clear();
    let out_of_memory =
        |o: &Outcome| o.records.iter().any(|r| matches!(r.error, Some(cliper::Error::OutOfMemory { .. })));
    match outcome {
        Ok(o) if single && (retry.get() || out_of_memory(&o)) => {
            let [(_, spec)] = chain.inputs.as_slice() else { return Ok(o) };
            run_tiled(ctx, chain, &app, TileInput::open(&FileSpec::parse(spec))?)
        }
        other => other,
    }
}

/// The queues a batch runs on: `app`'s and, on a GPU for a batch of at least 16 files of 8 MiB or more on
/// average (CT volumes), one more of the same device (its own context), so that one file's uploads, downloads and
/// host work overlap the other's kernels. Measured on an H200 (docs/benchmarks.md, "Batches"): 32 CT volumes
/// of 21 MB took 1.80 s on one queue, 1.46 on two, 1.59 on three; 64 PNGs of 2 MB 1.86 s on one, 2.09 on two —
/// a second context costs more than it saves on small files and short batches. `CLIPER_LANES` sets the count
/// (1 to 8). A CPU device computes on the cores the host work needs: one lane.
fn lanes_on(app: &ClApp, files: &[PathBuf]) -> Result<Vec<ClApp>> {
    let count = match std::env::var("CLIPER_LANES") {
        Ok(text) => text
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=8).contains(n))
            .ok_or_else(|| Error::invalid("CLIPER_LANES", format!("`{text}` is not a count from 1 to 8")))?,
        Err(_) if app.device().kind == cliper::DeviceKind::Gpu && files.len() >= 16 => {
            let sizes: Vec<u64> = files.iter().take(8).map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).collect();
            let mean = sizes.iter().sum::<u64>() / (sizes.len() as u64).max(1);
            if mean >= 8 << 20 { 2 } else { 1 }
        }
        Err(_) => 1,
    };
    let mut lanes = vec![app.clone()];
    for _ in 1..count.min(files.len().max(1)) {
        lanes.push(ClApp::builder().profiling(true).select(&app.device().id()).build()?);
    }
    Ok(lanes)
}

/// The single input of `chain`, opened, when the chain on it would not fit the device memory free under the
/// limit (`CLIPER_MEMORY_LIMIT`); `None` when it fits or the chain has several inputs. NPY files are sized from
/// their header; other files are read only when they are large enough to possibly not fit.
fn too_large(chain: &Chain, app: &ClApp) -> Result<Option<TileInput>> {
    let [(_, spec)] = chain.inputs.as_slice() else { return Ok(None) };
    let spec = FileSpec::parse(spec);
    // Files read in slabs are sized from their header; other formats only by reading them.
    let input = match TileInput::open_slabs(&spec)? {
        Some(input) => input,
        None => {
            let free = app.memory_limit().saturating_sub(app.memory_stats().live_bytes);
            // A file's data takes at least a byte per element and at least two device arrays of 4 bytes per
            // element are made from it: below an eighth of the free memory it fits whatever its format.
            let size = std::fs::metadata(&spec.path).map(|m| m.len()).unwrap_or(0);
            if size < free / 8 {
                return Ok(None);
            }
            TileInput::Image(spec.read()?)
        }
    };
    Ok(chain.needs_tiles(app, input.shape(), input.dtype()).then_some(input))
}

/// Runs `chain` in tiles (`Chain::run_tiled`, or over the devices of `--devices`), saying so on stderr, with a
/// progress bar over the tiles on a terminal; the outcome has the one record an untiled run would have (printed by
/// the caller).
fn run_tiled(ctx: &Context, chain: &Chain, app: &ClApp, input: TileInput) -> Result<Outcome> {
    let pool = match &ctx.devices {
        Some(spec) => DevicePool::new(ClApp::builder().profiling(ctx.profile).select(spec).build_all()?)?,
        None => DevicePool::new(vec![app.clone()])?,
    };
    let names: Vec<String> = pool.apps().iter().map(|a| a.device().name.clone()).collect();
    let shape = input.shape().to_vec();
    let bar = if std::io::stderr().is_terminal() { ProgressBar::new(0) } else { ProgressBar::hidden() };
    bar.set_style(
        ProgressStyle::with_template("tiles {bar:40} {pos}/{len} {elapsed_precise}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let host = cliper::HostBudget::current()?.bytes;
    let outcome = chain.run_tiled_on(&pool, Some(input), |event| match event {
        TileProgress::Planned(plan) => {
            bar.set_length(plan.tiles() as u64);
            bar.suspend(|| {
                eprintln!(
                    "the input {shape:?} needs more in one go than the {} bytes of device memory free on {} or the \
                     {host}-byte host memory budget allow: running in {} tiles of {} along axis {} ({} of context on each side)",
                    plan.budget,
                    names.join(" and "),
                    plan.tiles(),
                    plan.rows,
                    plan.axis,
                    plan.halo
                )
            });
        }
        TileProgress::Tile(_) => bar.inc(1),
        TileProgress::Shrunk(rows) => bar.suspend(|| eprintln!("a tile did not fit: tiles of {rows} from here on")),
    });
    bar.finish_and_clear();
    let outcome = outcome?;
    // A single run's record: the caller prints it, as it does an untiled run's.
    let values = outcome.values.into_iter().map(|(name, value, kind)| (name, Vec::new(), vec![value], kind)).collect();
    let record = RunRecord { written: outcome.written, values, ..RunRecord::new(None) };
    Ok(Outcome { records: vec![record], report: None })
}

/// A batch spread over the devices of `spec` (`--devices`): one worker per device, each with its own built chain,
/// taking the next file as soon as it is free; each file's lines as it finishes; a line per device at the end
/// (files, seconds, share of the files) on stderr.
fn run_on_devices(
    ctx: &Context,
    chain: &Chain,
    batch: &BatchInput,
    spec: &str,
    finished: impl Fn(&RunRecord, &str, f64),
) -> Result<Outcome> {
    let apps = ClApp::builder().profiling(ctx.profile).select(spec).build_all()?;
    let pool = DevicePool::new(apps)?;
    let bar = if std::io::stdout().is_terminal() {
        ProgressBar::new(batch.files.len() as u64)
    } else {
        ProgressBar::hidden()
    };
    let results = pool.map_as_done(
        &batch.files,
        |_| chain.runner(Some(batch.input)),
        |runner, app, file| Ok(runner.run_file(app, Some(file), false).0),
        |done| {
            if let Ok(record) = &done.result {
                if let (Some(e), Some(file)) = (&record.error, &record.input) {
                    bar.suspend(|| eprintln!("error: {} (on {})", naming(&file.display().to_string(), e), done.device));
                }
                bar.suspend(|| finished(record, &done.device, done.seconds));
            }
            bar.inc(1);
        },
    );
    bar.finish_and_clear();
    let total = batch.files.len().max(1);
    for share in pool.shares(&results) {
        eprintln!(
            "device {}: {} file(s), {:.2} s, {:.0}% of the files",
            share.device,
            share.inputs,
            share.seconds,
            100.0 * share.inputs as f64 / total as f64
        );
    }
    let records = results
        .into_iter()
        .map(|r| match r.result {
            Ok(record) => record,
            Err(e) => RunRecord::failed(batch.files.get(r.input).cloned(), e),
        })
        .collect();
    Ok(Outcome { records, report: None })
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

/// `--manifest FILE`: one JSON line per batch file, appended as each ends — input, status (`ok`, `failed`,
/// `skipped`), outputs, device, seconds, error — so a re-submitted job's log says what each run did.
///
/// Shards of one job on several hosts may share the file (docs/scaling.md): each line is written whole, in one
/// write, under an exclusive lock on the file, at its end as found once the lock is held, and flushed to the file
/// system before the lock is released — so lines never interleave, also on network file systems (NFS), where
/// appends are not atomic but locks are honoured across hosts. A line that cannot be written fails the run.
pub struct Manifest {
    file: Option<std::sync::Mutex<std::fs::File>>,
    path: PathBuf,
    /// The first line that could not be written.
    failed: std::sync::Mutex<Option<Error>>,
}

impl Manifest {
    pub fn open(path: Option<&Path>) -> Result<Manifest> {
        let failed = std::sync::Mutex::new(None);
        let Some(path) = path else { return Ok(Manifest { file: None, path: PathBuf::new(), failed }) };
        cliper::chain::create_parent(path)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        Ok(Manifest { file: Some(std::sync::Mutex::new(file)), path: path.to_path_buf(), failed })
    }

    /// Appends one line, whole (see the type's documentation); an error is also kept for [`Manifest::finish`].
    pub fn line(&self, value: serde_json::Value) -> Result<()> {
        use std::io::{Seek, Write};
        let Some(file) = &self.file else { return Ok(()) };
        let file = file.lock().unwrap_or_else(|p| p.into_inner());
        let text = format!("{value}\n");
        let write = |mut f: &std::fs::File| -> std::io::Result<()> {
            f.lock()?;
            let written = f
                .seek(std::io::SeekFrom::End(0))
                .and_then(|_| f.write_all(text.as_bytes()))
                .and_then(|_| f.sync_data());
            let unlocked = f.unlock();
            written.and(unlocked)
        };
        write(&file).map_err(|source| {
            let e = Error::Io { path: self.path.clone(), source };
            self.failed.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(|| e.clone());
            e
        })
    }

    /// The first error of a line that could not be written, if any: the run then fails.
    pub fn finish(&self) -> Result<()> {
        match self.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn record(&self, record: &RunRecord, device: &str, seconds: f64) -> Result<()> {
        self.line(Manifest::entry(record, device, seconds))
    }

    /// A finished file's line: input, status, outputs, device, seconds, error.
    pub fn entry(record: &RunRecord, device: &str, seconds: f64) -> serde_json::Value {
        let outputs: Vec<String> = record.written.iter().map(|(_, p, _, _)| p.display().to_string()).collect();
        serde_json::json!({
            "input": record.input.as_ref().map(|p| p.display().to_string()),
            "status": if record.error.is_some() { "failed" } else { "ok" },
            "outputs": outputs,
            "device": device,
            "seconds": seconds,
            "error": record.error.as_ref().map(one_line),
        })
    }

    fn skipped(&self, input: &Path) -> Result<()> {
        self.line(serde_json::json!({
            "input": input.display().to_string(),
            "status": "skipped",
            "outputs": [],
            "device": null,
            "seconds": 0.0,
            "error": null,
        }))
    }
}
