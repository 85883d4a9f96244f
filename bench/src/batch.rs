//! `cliper-bench batch` (issue 45, docs/benchmarks.md "Batches"): folders of files end to end — CT volumes
//! (NIfTI), PNG images, DICOM series — through `cliper run pipelines/bench/<case>-batch.toml`, beside the same
//! work by nibabel/pydicom/Pillow + scipy in one process and in a pool of every core and by CuPy on a GPU
//! (scripts/bench/peer_batch.py), and beside the copy limit: reading the inputs and writing the outputs' bytes
//! once, on every core. Each case's outputs are checked against the scipy peer's with cliper's readers; the
//! peak resident memory of the `cliper` process is set against its host budget.

mod check;
mod timed;

use crate::suite::today;
use check::{CheckOutcome, Comparison};
use clap::{Args, ValueEnum};
use cliper::{Error, Result};
use serde::Serialize;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `cliper-bench batch`'s options.
#[derive(Args, Debug)]
pub(crate) struct BatchArgs {
    /// Cases to run, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "ct,png,dicom")]
    cases: Vec<BatchCase>,
    /// Smaller batches for a CPU device (ct 8, png 16, dicom 4 instead of 32, 64, 8).
    #[arg(long)]
    quick: bool,
    /// Files per case (series for dicom), instead of the case's default.
    #[arg(long)]
    count: Option<usize>,
    /// Volume shape Z,Y,X for ct and dicom (default 160,256,256 and 96,256,256); png takes the last two (default
    /// 1024,1024).
    #[arg(long, value_delimiter = ',')]
    shape: Vec<usize>,
    /// Where the data (made once, kept) and the outputs (removed after the check unless --keep) go.
    #[arg(long, default_value = "target/batch-bench")]
    dir: PathBuf,
    /// The `cliper` binary to time (default: the one beside this program, else `cliper` on the PATH).
    #[arg(long)]
    cliper: Option<PathBuf>,
    /// Peers to run: scipy (one process), pool (a process pool of --workers), cupy (when it finds a GPU).
    #[arg(long, value_delimiter = ',', default_value = "scipy,pool,cupy")]
    peers: Vec<PeerKind>,
    /// Processes of the scipy pool and threads of the copy limit (default: every core).
    #[arg(long)]
    workers: Option<usize>,
    /// Timed runs of each tool (the median is reported).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
    /// Write the records here as a JSON list.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Keep every run's outputs under --dir.
    #[arg(long)]
    keep: bool,
    /// The Python that runs the peers and makes the data.
    #[arg(long, default_value = "python3")]
    python: PathBuf,
    /// The peers' script.
    #[arg(long, default_value = "scripts/bench/peer_batch.py")]
    peer_script: PathBuf,
    /// The folder of the cases' pipeline files.
    #[arg(long, default_value = "pipelines/bench")]
    pipelines: PathBuf,
}

/// A batch case; its record's id is `batch_<name>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum BatchCase {
    Ct,
    Png,
    Dicom,
}

/// A peer of the batch cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum PeerKind {
    Scipy,
    Pool,
    Cupy,
}

impl BatchCase {
    fn name(self) -> &'static str {
        match self {
            BatchCase::Ct => "ct",
            BatchCase::Png => "png",
            BatchCase::Dicom => "dicom",
        }
    }

    fn id(self) -> String {
        format!("batch_{}", self.name())
    }

    fn default_count(self, quick: bool) -> usize {
        match (self, quick) {
            (BatchCase::Ct, false) => 32,
            (BatchCase::Ct, true) => 8,
            (BatchCase::Png, false) => 64,
            (BatchCase::Png, true) => 16,
            (BatchCase::Dicom, false) => 8,
            (BatchCase::Dicom, true) => 4,
        }
    }

    /// The shape `make-<case>` gets: `--shape` (Z, Y, X; the last two for PNG) or the case's default.
    fn shape(self, given: &[usize]) -> Result<Vec<usize>> {
        let shape = match (self, given) {
            (BatchCase::Ct, []) => vec![160, 256, 256],
            (BatchCase::Dicom, []) => vec![96, 256, 256],
            (BatchCase::Png, []) => vec![1024, 1024],
            (BatchCase::Png, [_, y, x]) => vec![*y, *x],
            (_, [z, y, x]) => vec![*z, *y, *x],
            _ => {
                return Err(Error::invalid("cliper-bench batch", format!("--shape {given:?}: give Z,Y,X")));
            }
        };
        if shape.contains(&0) {
            return Err(Error::invalid("cliper-bench batch", format!("--shape {given:?}: every axis needs a length")));
        }
        Ok(shape)
    }

    /// What the files are, for the table's heading.
    fn describe(self) -> &'static str {
        match self {
            BatchCase::Ct => "int16 NIfTI CT volumes (scl_slope 0.5, scl_inter -1024)",
            BatchCase::Png => "16-bit grey PNGs",
            BatchCase::Dicom => "DICOM CT series (int16 slices, RescaleSlope 0.5)",
        }
    }

    /// The pipeline file's input and output names, and the output argument for a folder `out`.
    fn pipeline_names(self) -> (&'static str, &'static str) {
        match self {
            BatchCase::Ct | BatchCase::Dicom => ("ct", "labels"),
            BatchCase::Png => ("image", "edges"),
        }
    }

    /// Where cliper writes each item's output: the folder (the input's file name) for files; a series folder has
    /// no extension, so its NIfTI is named by `{stem}`.
    fn output_spec(self, out: &Path) -> String {
        match self {
            BatchCase::Ct | BatchCase::Png => format!("{}/", out.display()),
            BatchCase::Dicom => format!("{}/{{stem}}.nii", out.display()),
        }
    }

    fn comparison(self) -> Comparison {
        match self {
            BatchCase::Ct | BatchCase::Dicom => Comparison::Partition,
            BatchCase::Png => Comparison::WithinOne,
        }
    }
}

/// One tool's line of a case.
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct ToolRecord {
    /// `cliper`, `scipy`, `scipy-poolW`, `cupy`, `copy-once`, `copy-once-fsync`.
    pub(crate) tool: String,
    /// The median of `runs_s`.
    pub(crate) wall_s: Option<f64>,
    pub(crate) runs_s: Vec<f64>,
    /// Batch items (files, or series) per second at `wall_s`.
    pub(crate) files_per_s: Option<f64>,
    /// This tool's time over cliper's (> 1: cliper is faster).
    pub(crate) vs_cliper: Option<f64>,
    /// For peers: the Python processes' whole times, seconds (interpreter start and imports included).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) process_s: Vec<f64>,
    /// Why the tool did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) skipped: Option<String>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// A goal of issue 45 and whether this run met it (`met: null` when a number it needs is missing).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct GoalRecord {
    pub(crate) goal: String,
    pub(crate) value: Option<f64>,
    pub(crate) met: Option<bool>,
}

/// The output check's verdict (`passed: null` when no peer output was there to compare with).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct CheckRecord {
    pub(crate) passed: Option<bool>,
    pub(crate) detail: String,
}

/// Everything one case measured: what docs/benchmarks.md's tables are made of.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct BatchRecord {
    pub(crate) case: String,
    pub(crate) device: String,
    /// `gpu`, `cpu`, … (the goals differ).
    pub(crate) device_kind: String,
    pub(crate) date: String,
    pub(crate) quick: bool,
    /// Batch items: files (ct, png) or series (dicom).
    pub(crate) count: usize,
    /// One item's shape, `ZxYxX` (`YxX` for png).
    pub(crate) shape: String,
    pub(crate) input_files: usize,
    pub(crate) input_bytes: u64,
    pub(crate) output_files: usize,
    pub(crate) output_bytes: u64,
    pub(crate) repeat: usize,
    pub(crate) workers: usize,
    pub(crate) tools: Vec<ToolRecord>,
    /// The cliper process's resident-set high-water mark (VmHWM), the largest over its runs.
    pub(crate) peak_rss_bytes: Option<u64>,
    pub(crate) host_budget_bytes: u64,
    pub(crate) host_budget_source: String,
    pub(crate) check: CheckRecord,
    pub(crate) goals: Vec<GoalRecord>,
    /// The peers' own lines, as `cliper-bench report` and the docs quote them.
    pub(crate) peer_lines: Vec<String>,
    /// True when cliper failed, its output differs from the peer's, or the case could not run.
    pub(crate) failed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// What every case shares: the options, resolved, and the device the `cliper` runs will take.
struct Settings<'a> {
    args: &'a BatchArgs,
    cliper: PathBuf,
    workers: usize,
    device: String,
    device_kind: String,
    date: String,
}

pub(crate) fn run(args: &BatchArgs) -> Result<()> {
    if args.repeat == 0 {
        return Err(Error::invalid("cliper-bench batch", "--repeat 0: give at least one run"));
    }
    for case in &args.cases {
        case.shape(&args.shape)?;
    }
    // The device the cliper runs will choose: the same rule (CLIPER_DEVICE, else the best scored).
    let (device, device_kind) = {
        let app = cliper::ClApp::builder().use_env(true).build()?;
        let info = app.device();
        (format!("{} ({}, {})", info.name, info.platform_name, info.version), format!("{:?}", info.kind).to_lowercase())
    };
    let settings = Settings {
        args,
        cliper: args.cliper.clone().unwrap_or_else(default_cliper),
        workers: args.workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1),
        device,
        device_kind,
        date: today(),
    };
    println!("device: {} ({}); cliper: {}", settings.device, settings.device_kind, settings.cliper.display());
    let mut records = Vec::new();
    for &case in &args.cases {
        let record = run_case(&settings, case);
        print_record(&record);
        records.push(record);
    }
    if let Some(path) = &args.json {
        write_json(path, &records)?;
        println!("wrote {} records to {}", records.len(), path.display());
    }
    let failed: Vec<String> = records
        .iter()
        .filter(|r| r.failed)
        .map(|r| format!("{}: {}", r.case, r.error.as_deref().unwrap_or(&r.check.detail)))
        .collect();
    if failed.is_empty() { Ok(()) } else { Err(Error::invalid("cliper-bench batch", failed.join("; "))) }
}

/// `cliper` beside this program (target/release/cliper for target/release/cliper-bench), else on the PATH.
fn default_cliper() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("cliper")))
        .filter(|path| path.is_file())
        .unwrap_or_else(|| PathBuf::from("cliper"))
}

/// Runs one case into a record; what fails inside it is the record's error, not the program's.
fn run_case(settings: &Settings, case: BatchCase) -> BatchRecord {
    let count = settings.args.count.unwrap_or_else(|| case.default_count(settings.args.quick));
    let shape = case.shape(&settings.args.shape).unwrap_or_default();
    let mut record = BatchRecord {
        case: case.id(),
        device: settings.device.clone(),
        device_kind: settings.device_kind.clone(),
        date: settings.date.clone(),
        quick: settings.args.quick,
        count,
        shape: shape.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("x"),
        input_files: 0,
        input_bytes: 0,
        output_files: 0,
        output_bytes: 0,
        repeat: settings.args.repeat,
        workers: settings.workers,
        tools: Vec::new(),
        peak_rss_bytes: None,
        host_budget_bytes: 0,
        host_budget_source: String::new(),
        check: CheckRecord { passed: None, detail: "the case stopped before its outputs were compared".into() },
        goals: Vec::new(),
        peer_lines: Vec::new(),
        failed: false,
        error: None,
    };
    if let Err(e) = measure_case(settings, case, &shape, &mut record) {
        record.failed = true;
        record.error = Some(e.to_string());
    }
    record.goals = goals(&record, settings.workers);
    record
}

/// Makes (or finds) the data, times every tool, checks the outputs and cleans up.
fn measure_case(settings: &Settings, case: BatchCase, shape: &[usize], record: &mut BatchRecord) -> Result<()> {
    let args = settings.args;
    let data = make_data(settings, case, record.count, shape)?;
    let inputs = timed::files_under(&data)?;
    record.input_files = inputs.len();
    record.input_bytes = timed::warm_page_cache(&inputs)?;
    let budget = cliper::HostBudget::current()?;
    (record.host_budget_bytes, record.host_budget_source) = (budget.bytes, budget.source);
    let outputs = args.dir.join("out").join(case.name());
    timed::remove_dir(&outputs)?;
    std::fs::create_dir_all(&outputs).map_err(|source| Error::Io { path: outputs.clone(), source })?;
    warm_up_cliper(settings, case, &data, &outputs)?;

    let peers = runnable_peers(settings, record);
    let mut cliper_runs = Vec::new();
    let mut peer_runs: Vec<Vec<timed::PeerRun>> = vec![Vec::new(); peers.len()];
    let mut copies: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for rep in 0..args.repeat {
        let out = outputs.join(format!("cliper-{rep}"));
        let run = run_cliper(settings, case, &data, &out, &outputs.join(format!("cliper-{rep}.log")))?;
        record.peak_rss_bytes = record.peak_rss_bytes.max(run.peak_rss);
        cliper_runs.push(run.wall_s);
        let written = timed::files_under(&out)?;
        let written_sizes = timed::sizes(&written)?;
        (record.output_files, record.output_bytes) = (written.len(), written_sizes.iter().sum());
        for (k, (peer, who)) in peers.iter().enumerate() {
            let peer_out = outputs.join(format!("{who}-{rep}"));
            match run_peer(settings, case, *peer, &data, &peer_out, who, record.count) {
                Ok(run) => {
                    if let Some(runs) = peer_runs.get_mut(k) {
                        runs.push(run);
                    }
                }
                // One line per peer that failed, with its first error.
                Err(e) if !record.tools.iter().any(|t| t.tool == *who) => record.tools.push(ToolRecord {
                    tool: who.clone(),
                    error: Some(e.to_string()),
                    ..Default::default()
                }),
                Err(_) => {}
            }
        }
        for (fsync, times) in [false, true].into_iter().zip(copies.iter_mut()) {
            let dest = outputs.join(format!("copy-{rep}"));
            times.push(timed::copy_once(&inputs, &written_sizes, &dest, settings.workers, fsync)?);
            timed::remove_dir(&dest)?;
        }
        if rep > 0 && !args.keep {
            timed::remove_dir(&out)?;
            for (_, who) in &peers {
                timed::remove_dir(&outputs.join(format!("{who}-{rep}")))?;
            }
        }
    }
    let check = check_against_peer(case, &outputs, &peers);
    record.check = CheckRecord {
        passed: check.as_ref().map(|c| c.passed),
        detail: check.map_or_else(|| "not checked: no scipy or CuPy output to compare with".to_string(), |c| c.detail),
    };
    record.failed = record.check.passed == Some(false);
    fill_tools(record, cliper_runs, &peers, peer_runs, copies);
    if !args.keep {
        timed::remove_dir(&outputs)?;
    }
    Ok(())
}

/// The case's data under `--dir`: made by `peer_batch.py make-<case>` into a temporary folder renamed when
/// complete, so a folder that exists holds the whole batch and is used again.
fn make_data(settings: &Settings, case: BatchCase, count: usize, shape: &[usize]) -> Result<PathBuf> {
    let shape_text = shape.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("x");
    let data = settings.args.dir.join("data").join(format!("{}-{count}x{shape_text}", case.name()));
    if data.is_dir() {
        return Ok(data);
    }
    let partial = data.with_extension("partial");
    timed::remove_dir(&partial)?;
    let count_text = count.to_string();
    let shape_words: Vec<String> = shape.iter().map(|v| v.to_string()).collect();
    let mut words: Vec<&OsStr> = vec![OsStr::new(match case {
        BatchCase::Ct => "make-ct",
        BatchCase::Png => "make-png",
        BatchCase::Dicom => "make-dicom",
    })];
    words.extend([partial.as_os_str(), OsStr::new("--count"), OsStr::new(&count_text), OsStr::new("--shape")]);
    words.extend(shape_words.iter().map(OsStr::new));
    let clock = std::time::Instant::now();
    timed::python(&settings.args.python, &settings.args.peer_script, &words)?;
    std::fs::rename(&partial, &data).map_err(|source| Error::Io { path: data.clone(), source })?;
    println!("made {} in {:.1} s", data.display(), clock.elapsed().as_secs_f64());
    Ok(data)
}

/// The `cliper run` command of a case on `input` (a folder, or one item) writing to `output_spec`.
fn cliper_command(settings: &Settings, case: BatchCase, input: &Path, output_spec: &str) -> Command {
    let (input_name, output_name) = case.pipeline_names();
    let mut command = Command::new(&settings.cliper);
    command
        .arg("run")
        .arg(settings.args.pipelines.join(format!("{}-batch.toml", case.name())))
        .arg("--input")
        .arg(format!("{input_name}={}", input.display()))
        .arg("--output")
        .arg(format!("{output_name}={output_spec}"));
    command
}

/// One untimed run on the batch's first item, so that every timed run finds the compiled programs in the
/// caches (cliper's and the OpenCL driver's), as CuPy's peer builds its kernels before its clock starts.
fn warm_up_cliper(settings: &Settings, case: BatchCase, data: &Path, outputs: &Path) -> Result<()> {
    let first = std::fs::read_dir(data)
        .map_err(|source| Error::Io { path: data.to_path_buf(), source })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .min()
        .ok_or_else(|| Error::invalid(data.display().to_string(), "the batch folder is empty"))?;
    let out = outputs.join("warm-up");
    let extension = if case == BatchCase::Png { "png" } else { "nii" };
    // One input is not a batch: its output is a file (`{stem}` is for batches).
    let command = cliper_command(settings, case, &first, &format!("{}/warm-up.{extension}", out.display()));
    timed::run_with_peak_rss(command, &outputs.join("warm-up.log"))?;
    timed::remove_dir(&out)
}

fn run_cliper(settings: &Settings, case: BatchCase, data: &Path, out: &Path, log: &Path) -> Result<timed::ProcessRun> {
    timed::remove_dir(out)?;
    let data_dir = format!("{}/", data.display());
    timed::run_with_peak_rss(cliper_command(settings, case, Path::new(&data_dir), &case.output_spec(out)), log)
}

/// The peers asked for that can run, each with the name it prints; a line in the record for each skipped one.
fn runnable_peers(settings: &Settings, record: &mut BatchRecord) -> Vec<(PeerKind, String)> {
    let mut peers = Vec::new();
    for &peer in &settings.args.peers {
        let who = match peer {
            PeerKind::Scipy => "scipy".to_string(),
            PeerKind::Pool => format!("scipy-pool{}", settings.workers),
            PeerKind::Cupy => "cupy".to_string(),
        };
        if peers.iter().any(|(_, w)| *w == who) {
            continue;
        }
        if peer == PeerKind::Cupy
            && let Err(reason) = timed::cupy_ready(&settings.args.python)
        {
            println!("{}: cupy skipped: {reason}", record.case);
            record.tools.push(ToolRecord { tool: who, skipped: Some(reason), ..Default::default() });
            continue;
        }
        peers.push((peer, who));
    }
    peers
}

fn run_peer(
    settings: &Settings,
    case: BatchCase,
    peer: PeerKind,
    data: &Path,
    out: &Path,
    who: &str,
    count: usize,
) -> Result<timed::PeerRun> {
    timed::remove_dir(out)?;
    let workers = match peer {
        PeerKind::Pool => settings.workers,
        PeerKind::Scipy | PeerKind::Cupy => 1,
    }
    .to_string();
    let engine = if peer == PeerKind::Cupy { "cupy" } else { "scipy" };
    let words: Vec<&OsStr> = vec![
        OsStr::new("run"),
        OsStr::new(case.name()),
        OsStr::new(engine),
        data.as_os_str(),
        out.as_os_str(),
        OsStr::new("--workers"),
        OsStr::new(&workers),
    ];
    let (stdout, process_s) = timed::python(&settings.args.python, &settings.args.peer_script, &words)?;
    let (line, batch_s) = timed::parse_peer_line(&stdout, who, case.name(), count)?;
    Ok(timed::PeerRun { line, batch_s, process_s })
}

/// cliper's first run against the first run of the scipy peer (one process, else the pool, else CuPy).
fn check_against_peer(case: BatchCase, outputs: &Path, peers: &[(PeerKind, String)]) -> Option<CheckOutcome> {
    let reference = [PeerKind::Scipy, PeerKind::Pool, PeerKind::Cupy]
        .into_iter()
        .find_map(|kind| peers.iter().find(|(p, _)| *p == kind))
        .map(|(_, who)| outputs.join(format!("{who}-0")))
        .filter(|dir| dir.is_dir())?;
    Some(check::check_outputs(case.comparison(), &outputs.join("cliper-0"), &reference))
}

/// The tools' lines from their runs: medians, rates and ratios to cliper's median.
fn fill_tools(
    record: &mut BatchRecord,
    cliper_runs: Vec<f64>,
    peers: &[(PeerKind, String)],
    peer_runs: Vec<Vec<timed::PeerRun>>,
    copies: [Vec<f64>; 2],
) {
    let count = record.count as f64;
    let line = |tool: &str, mut runs: Vec<f64>, reference: Option<f64>| {
        let wall = (!runs.is_empty()).then(|| crate::measure::median(&mut runs.clone()));
        runs.sort_by(f64::total_cmp);
        ToolRecord {
            tool: tool.to_string(),
            wall_s: wall,
            files_per_s: wall.map(|w| count / w),
            vs_cliper: wall.zip(reference).map(|(w, c)| w / c),
            runs_s: runs,
            ..Default::default()
        }
    };
    let cliper = (!cliper_runs.is_empty()).then(|| crate::measure::median(&mut cliper_runs.clone()));
    let mut tools = vec![line("cliper", cliper_runs, cliper)];
    for ((_, who), runs) in peers.iter().zip(peer_runs) {
        if runs.is_empty() {
            continue; // failed: its error line is already in the record
        }
        record.peer_lines.extend(runs.iter().map(|r| r.line.clone()));
        let mut tool = line(who, runs.iter().map(|r| r.batch_s).collect(), cliper);
        tool.process_s = runs.iter().map(|r| r.process_s).collect();
        tools.push(tool);
    }
    let [plain, fsync] = copies;
    tools.push(line("copy-once", plain, cliper));
    tools.push(line("copy-once-fsync", fsync, cliper));
    // Skipped and failed peers (recorded while running) go after the measured lines.
    tools.append(&mut record.tools);
    record.tools = tools;
}

fn tool_wall(record: &BatchRecord, tool: &str) -> Option<f64> {
    record.tools.iter().find(|t| t.tool == tool).and_then(|t| t.wall_s)
}

/// Issue 45's goals for this record: on a GPU ≥ 2× the scipy pool of every core and ≥ 3× CuPy, on a CPU ≥ 1×
/// the pool; everywhere within 1.5× the copy limit and the peak resident memory within the host budget.
fn goals(record: &BatchRecord, workers: usize) -> Vec<GoalRecord> {
    let cliper = tool_wall(record, "cliper");
    let faster = |peer: &str| tool_wall(record, peer).zip(cliper).map(|(p, c)| p / c);
    let goal = |goal: String, value: Option<f64>, met: fn(f64) -> bool| GoalRecord { met: value.map(met), goal, value };
    let pool = format!("scipy-pool{workers}");
    let mut goals = if record.device_kind == "gpu" {
        vec![
            goal(format!("≥ 2× the scipy pool of {workers}"), faster(&pool), |v| v >= 2.0),
            goal("≥ 3× nibabel + CuPy".into(), faster("cupy"), |v| v >= 3.0),
        ]
    } else {
        vec![goal(format!("≥ 1× the scipy pool of {workers}"), faster(&pool), |v| v >= 1.0)]
    };
    let over_copy = cliper.zip(tool_wall(record, "copy-once")).map(|(c, copy)| c / copy);
    goals.push(goal("≤ 1.5× the copy limit".into(), over_copy, |v| v <= 1.5));
    let rss = record.peak_rss_bytes.map(|b| b as f64 / record.host_budget_bytes.max(1) as f64);
    goals.push(goal("peak RSS within the host budget".into(), rss, |v| v <= 1.0));
    goals
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// The case's table: a heading, a Markdown table of the tools, the check, the memory and the goals.
fn print_record(r: &BatchRecord) {
    println!();
    println!(
        "{}: {} × {} {}, {} files, {} in; cliper wrote {} files, {}; {} run(s) each, median",
        r.case,
        r.count,
        r.shape,
        describe_case(&r.case),
        r.input_files,
        megabytes(r.input_bytes),
        r.output_files,
        megabytes(r.output_bytes),
        r.repeat
    );
    println!("| tool | wall s | files/s | × vs cliper |");
    println!("|---|---|---|---|");
    for t in &r.tools {
        match (&t.wall_s, &t.skipped, &t.error) {
            (Some(wall), _, _) => println!(
                "| {} | {wall:.3} | {:.2} | {:.2}× |",
                tool_label(&t.tool),
                t.files_per_s.unwrap_or(f64::NAN),
                t.vs_cliper.unwrap_or(f64::NAN)
            ),
            (None, Some(why), _) => println!("| {} | skipped: {why} | | |", tool_label(&t.tool)),
            (None, _, Some(e)) => println!("| {} | failed: {e} | | |", tool_label(&t.tool)),
            (None, None, None) => println!("| {} | — | | |", tool_label(&t.tool)),
        }
    }
    let verdict = match r.check.passed {
        Some(true) => "passed",
        Some(false) => "FAILED",
        None => "not checked",
    };
    println!("check: {verdict}: {}", r.check.detail);
    match r.peak_rss_bytes {
        Some(peak) => println!(
            "peak RSS of cliper: {}; host budget {} ({})",
            megabytes(peak),
            megabytes(r.host_budget_bytes),
            r.host_budget_source
        ),
        None => println!("peak RSS of cliper: not measured"),
    }
    for g in &r.goals {
        let met = match g.met {
            Some(true) => "met",
            Some(false) => "missed",
            None => "not measured",
        };
        match g.value {
            Some(v) => println!("goal {}: {v:.2} — {met}", g.goal),
            None => println!("goal {}: — {met}", g.goal),
        }
    }
    if let Some(e) = &r.error {
        println!("{} FAILED: {e}", r.case);
    }
}

fn describe_case(id: &str) -> &'static str {
    [BatchCase::Ct, BatchCase::Png, BatchCase::Dicom].into_iter().find(|c| c.id() == id).map_or("", |c| c.describe())
}

/// The table's name for a tool.
fn tool_label(tool: &str) -> String {
    match tool {
        "scipy" => "nibabel/pydicom/Pillow + scipy, one process".into(),
        "cupy" => "nibabel/pydicom/Pillow + CuPy".into(),
        "copy-once" => "copy limit: read + write once".into(),
        "copy-once-fsync" => "copy limit with fsync per file (as cliper saves)".into(),
        _ => match tool.strip_prefix("scipy-pool") {
            Some(w) => format!("… + scipy, pool of {w} processes"),
            None => tool.to_string(),
        },
    }
}

fn write_json(path: &Path, records: &[BatchRecord]) -> Result<()> {
    let text = serde_json::to_string_pretty(records)
        .map_err(|e| Error::invalid("cliper-bench batch", format!("serialising the records: {e}")))?;
    std::fs::write(path, text + "\n").map_err(|source| Error::Io { path: path.to_path_buf(), source })
}
