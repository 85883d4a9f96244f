//! Chains of operations with named arrays that stay on the device: pipeline files (`cliper run`), the
//! one-step chains behind each operation subcommand, and batch runs over directories and globs.

use super::data::{AnyData, FileSpec, OutputOptions, Precision, kind_for};
use super::ops::Op;
use cliper::{ClApp, Error, HostArray, Pipeline, Report, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// One step: an operation, the arrays it reads and the name of the array it writes.
#[derive(Clone, Debug)]
pub struct Step {
    pub op: Op,
    pub inputs: Vec<String>,
    pub output: String,
}

/// A whole chain: inputs (files, or one directory/glob for a batch), steps, and the arrays to save.
#[derive(Clone, Debug)]
pub struct Chain {
    pub precision: Precision,
    pub inputs: Vec<(String, String)>,
    pub steps: Vec<Step>,
    /// Array name, file (or directory / `{stem}` template), and its own conversion when the file gives one.
    pub outputs: Vec<(String, String, Option<OutputOptions>)>,
    /// The conversion for outputs without their own (the command line's --type/--scale/--clip).
    pub options: OutputOptions,
}

/// An `[output]` entry: a path, or a table with the path and how to convert.
#[derive(Deserialize)]
#[serde(untagged)]
enum OutputEntry {
    Path(String),
    Full {
        path: String,
        #[serde(rename = "type", default, deserialize_with = "dtype_name")]
        dtype: Option<cliper::Dtype>,
        #[serde(default)]
        scale: Option<super::data::ScaleArg>,
        #[serde(default)]
        clip: bool,
    },
}

fn dtype_name<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<cliper::Dtype>, D::Error> {
    let name = String::deserialize(d)?;
    super::data::parse_dtype(&name).map(Some).map_err(serde::de::Error::custom)
}

/// The TOML layout of a pipeline file (see docs/cli.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PipelineToml {
    #[serde(default)]
    precision: Precision,
    input: BTreeMap<String, String>,
    #[serde(default)]
    step: Vec<toml::Table>,
    #[serde(default)]
    output: BTreeMap<String, OutputEntry>,
}

impl Chain {
    /// Reads a pipeline file; every mistake is an error naming the file and the step.
    pub fn from_file(path: &Path) -> Result<Chain> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        Chain::from_toml(&text, path)
    }

    pub fn from_toml(text: &str, path: &Path) -> Result<Chain> {
        let bad = |reason: String| Error::Format { path: path.to_path_buf(), reason };
        let file: PipelineToml = toml::from_str(text).map_err(|e| bad(e.to_string().trim_end().replace('\n', " ")))?;
        let mut steps = Vec::with_capacity(file.step.len());
        for (i, mut table) in file.step.into_iter().enumerate() {
            let n = i + 1;
            let inputs = match table.remove("in") {
                Some(toml::Value::String(s)) => vec![s],
                Some(toml::Value::Array(a)) => a
                    .into_iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| bad(format!("step {n}: `in` must be a name or a list of names")))?,
                Some(_) => return Err(bad(format!("step {n}: `in` must be a name or a list of names"))),
                None => return Err(bad(format!("step {n} has no `in` (the array(s) it reads)"))),
            };
            let output = match table.remove("out") {
                Some(toml::Value::String(s)) => s,
                _ => return Err(bad(format!("step {n} needs `out = \"NAME\"` (the array it writes)"))),
            };
            let op = Op::deserialize(toml::Value::Table(table))
                .map_err(|e| bad(format!("step {n}: {}", e.to_string().trim_end().replace('\n', " "))))?;
            steps.push(Step { op, inputs, output });
        }
        let chain = Chain {
            precision: file.precision,
            inputs: file.input.into_iter().collect(),
            steps,
            outputs: file
                .output
                .into_iter()
                .map(|(name, entry)| match entry {
                    OutputEntry::Path(path) => (name, path, None),
                    OutputEntry::Full { path, dtype, scale, clip } => {
                        (name, path, Some(OutputOptions { dtype, scale, clip }))
                    }
                })
                .collect(),
            options: OutputOptions::default(),
        };
        chain.check().map_err(bad)?;
        Ok(chain)
    }

    /// Names are defined before use, once; each step has the inputs its operation takes.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.steps.is_empty() {
            return Err("the pipeline has no [[step]]".into());
        }
        let mut defined: Vec<&str> = self.inputs.iter().map(|(n, _)| n.as_str()).collect();
        for (i, step) in self.steps.iter().enumerate() {
            for name in &step.inputs {
                if !defined.contains(&name.as_str()) {
                    return Err(format!(
                        "step {} ({}) reads `{name}`, which no input or earlier step defines; defined so far: {defined:?}",
                        i + 1,
                        step.op.name()
                    ));
                }
            }
            if step.inputs.len() != step.op.arity() {
                return Err(format!(
                    "step {} ({}) takes {} input(s), `in` names {}",
                    i + 1,
                    step.op.name(),
                    step.op.arity(),
                    step.inputs.len()
                ));
            }
            if defined.contains(&step.output.as_str()) {
                return Err(format!("step {} writes `{}`, a name already in use", i + 1, step.output));
            }
            defined.push(&step.output);
        }
        for (name, _, _) in &self.outputs {
            if !defined.contains(&name.as_str()) {
                return Err(format!("[output] names `{name}`, which is not an input or a step's output"));
            }
        }
        Ok(())
    }

    /// Replaces an input's file (`--input NAME=PATH`).
    pub fn set_input(&mut self, assignment: &str) -> Result<()> {
        let (name, value) = split_assignment(assignment, "input")?;
        let names: Vec<String> = self.inputs.iter().map(|(n, _)| n.clone()).collect();
        let entry = self.inputs.iter_mut().find(|(n, _)| n == name).ok_or_else(|| unknown("input", name, &names))?;
        entry.1 = value.to_string();
        Ok(())
    }

    /// Replaces an output's file, or saves one more array (`--output NAME=PATH`).
    pub fn set_output(&mut self, assignment: &str) -> Result<()> {
        let (name, value) = split_assignment(assignment, "output")?;
        match self.outputs.iter_mut().find(|(n, _, _)| n == name) {
            Some(entry) => entry.1 = value.to_string(),
            None => self.outputs.push((name.to_string(), value.to_string(), None)),
        }
        self.check().map_err(|reason| Error::invalid("--output", reason))
    }
}

fn split_assignment<'a>(text: &'a str, what: &str) -> Result<(&'a str, &'a str)> {
    text.split_once('=').ok_or_else(|| Error::invalid(what, format!("`{text}` is not NAME=PATH")))
}

fn unknown(what: &str, name: &str, names: &[String]) -> Error {
    Error::invalid(what, format!("the pipeline has no {what} `{name}`; it has {names:?}"))
}

impl Chain {}

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

/// What one file (or the single run) produced.
pub struct RunRecord {
    pub input: Option<PathBuf>,
    pub written: Vec<(String, PathBuf, Vec<usize>, &'static str)>,
    pub values: Vec<(String, Vec<usize>, Vec<num_complex::Complex64>)>,
    /// Host↔device copies while the chain ran (loading inputs and saving outputs not counted): 0 by design.
    pub transfers: u64,
    pub error: Option<Error>,
}

/// What a chain run produced: one record per input file, and the profile of the first run.
pub struct Outcome {
    pub records: Vec<RunRecord>,
    pub report: Option<Report>,
}

impl Outcome {
    pub fn failures(&self) -> impl Iterator<Item = &Error> {
        self.records.iter().filter_map(|r| r.error.as_ref())
    }
}

/// Files a batch input names: a directory's files with a known extension, or a glob's matches, sorted.
pub fn batch_files(spec: &str) -> Result<Option<Vec<PathBuf>>> {
    let path = Path::new(spec);
    let known = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ["npy", "cfl", "png", "tif", "tiff", "mat"].contains(&e.to_ascii_lowercase().as_str()))
    };
    let mut files: Vec<PathBuf> = if path.is_dir() {
        std::fs::read_dir(path)
            .map_err(|source| Error::Io { path: path.to_path_buf(), source })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && known(p))
            .collect()
    } else if spec.contains(['*', '?', '[']) {
        glob::glob(spec)
            .map_err(|e| Error::invalid("batch input", format!("`{spec}` is not a valid glob: {e}")))?
            .filter_map(|p| p.ok())
            .filter(|p| p.is_file())
            .collect()
    } else {
        return Ok(None);
    };
    files.sort();
    if files.is_empty() {
        return Err(Error::invalid("batch input", format!("`{spec}` names no image or array files")));
    }
    Ok(Some(files))
}

/// The file an output goes to: `{stem}` replaced by the input's file stem; a directory (existing, or written
/// with a trailing `/`) gets the input's file name; in a batch, anything else is an error.
pub fn output_path(template: &str, input: Option<&Path>, batch: bool) -> Result<PathBuf> {
    let stem = input.and_then(|p| p.file_stem()).map(|s| s.to_string_lossy().into_owned());
    if template.contains("{stem}") {
        let stem = stem.ok_or_else(|| Error::invalid("output", "`{stem}` needs a file input"))?;
        return Ok(PathBuf::from(template.replace("{stem}", &stem)));
    }
    let as_dir = template.ends_with('/') || Path::new(template).is_dir();
    match (as_dir, input.and_then(|p| p.file_name())) {
        (true, Some(name)) => Ok(Path::new(template).join(name)),
        (true, None) => Err(Error::invalid("output", format!("`{template}` is a directory; name a file"))),
        (false, _) if batch => Err(Error::invalid(
            "output",
            format!("with several input files, `{template}` must be a directory or contain {{stem}}"),
        )),
        (false, _) => Ok(PathBuf::from(template)),
    }
}

/// The device arrays and processes of a built chain, kept for the next file of a batch.
struct Built {
    arrays: HashMap<String, AnyData>,
    pipeline: Pipeline,
    signature: Vec<(String, &'static str, Vec<usize>)>,
}

/// Runs `chain`: once, or once per file of its batch input, reusing the initialised chain while the inputs
/// keep their shapes and types. A failing file is reported and the rest still run.
pub fn run(ctx: &mut Context, chain: &Chain) -> Result<Outcome> {
    let mut batch_input: Option<(usize, Vec<PathBuf>)> = None;
    for (i, (name, spec)) in chain.inputs.iter().enumerate() {
        if let Some(files) = batch_files(spec)? {
            if batch_input.is_some() {
                return Err(Error::invalid(
                    "batch",
                    format!("only one input may be a directory or glob; `{name}` is a second"),
                ));
            }
            batch_input = Some((i, files));
        }
    }
    if let Some((_, files)) = &batch_input {
        // Every output must have a file per input before any file is processed.
        for (_, template, _) in &chain.outputs {
            output_path(template, files.first().map(PathBuf::as_path), true)?;
        }
    }
    let app = ctx.app()?;
    let runs: Vec<Option<PathBuf>> = match &batch_input {
        Some((_, files)) => files.iter().cloned().map(Some).collect(),
        None => vec![None],
    };
    let batch = batch_input.is_some();
    let fixed: Vec<Option<(FileSpec, HostArray)>> = chain
        .inputs
        .iter()
        .enumerate()
        .map(|(i, (_, spec))| match &batch_input {
            Some((b, _)) if *b == i => Ok(None),
            _ => {
                let spec = FileSpec::parse(spec);
                spec.read().map(|host| Some((spec, host)))
            }
        })
        .collect::<Result<_>>()?;
    let progress = if batch && std::io::stdout().is_terminal() {
        let bar = ProgressBar::new(runs.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let mut built: Option<Built> = None;
    let mut records = Vec::with_capacity(runs.len());
    let mut report = None;
    for file in runs {
        if let Some(f) = &file {
            progress.set_message(f.display().to_string());
        }
        // The batch input is read per file; the others were read once, before the loop.
        let batch_file = match (&batch_input, &file) {
            (Some((b, _)), Some(f)) => {
                let pattern = chain.inputs.get(*b).map_or("", |(_, p)| p.as_str());
                let spec = FileSpec::parse(pattern).with_path(f.clone());
                spec.read().map(|host| Some((*b, spec, host)))
            }
            _ => Ok(None),
        };
        let mut record =
            RunRecord { input: file.clone(), written: Vec::new(), values: Vec::new(), transfers: 0, error: None };
        let result = batch_file.and_then(|batch_file| {
            let inputs: Vec<(&FileSpec, &HostArray)> = fixed
                .iter()
                .enumerate()
                .filter_map(|(i, f)| match (&batch_file, f) {
                    (Some((b, spec, host)), _) if *b == i => Some((spec, host)),
                    (_, Some((spec, host))) => Some((spec, host)),
                    _ => None,
                })
                .collect();
            let changing = batch_file.as_ref().map(|(b, _, _)| *b);
            let profile = ctx.profile && report.is_none();
            run_once(&app, profile, chain, &inputs, changing, file.as_deref(), &mut built, &mut record)
        });
        match result {
            Ok(r) => report = report.or(r),
            Err(e) => {
                if batch {
                    let shown = file.as_deref().map(|f| f.display().to_string()).unwrap_or_default();
                    progress.suspend(|| eprintln!("error: {}", naming(&shown, &e)));
                }
                record.error = Some(e);
            }
        }
        records.push(record);
        progress.inc(1);
    }
    progress.finish_and_clear();
    Ok(Outcome { records, report })
}

/// One run of the chain on `inputs` (in the chain's input order). A chain built for inputs of the same types and
/// shapes is reused: only the input at `changing` (the batch input) is uploaded again.
#[allow(clippy::too_many_arguments)]
fn run_once(
    app: &ClApp,
    profile: bool,
    chain: &Chain,
    inputs: &[(&FileSpec, &HostArray)],
    changing: Option<usize>,
    file: Option<&Path>,
    built: &mut Option<Built>,
    record: &mut RunRecord,
) -> Result<Option<Report>> {
    let batch = changing.is_some();
    let double = chain.precision.double(&inputs.iter().map(|(_, h)| h.dtype()).collect::<Vec<_>>());
    let signature: Vec<(String, &'static str, Vec<usize>)> = chain
        .inputs
        .iter()
        .zip(inputs)
        .map(|((name, _), (_, h))| (name.clone(), kind_for(h, double).name(), h.shape().to_vec()))
        .collect();
    let reused = match (built.as_ref(), changing) {
        (Some(b), Some(i)) if b.signature == signature => {
            let missing = || Error::invalid("batch", format!("input {i} is missing"));
            let (spec, host) = inputs.get(i).ok_or_else(missing)?;
            let (name, _) = chain.inputs.get(i).ok_or_else(missing)?;
            defined(&b.arrays, name)?.overwrite(host, &spec.path)?;
            true
        }
        _ => false,
    };
    if !reused {
        *built = None;
        let mut arrays = HashMap::new();
        for ((name, _), (spec, host)) in chain.inputs.iter().zip(inputs) {
            arrays.insert(name.clone(), AnyData::upload(app, host, kind_for(host, double), &spec.path)?);
        }
        let mut pipeline = Pipeline::new(app);
        for (i, step) in chain.steps.iter().enumerate() {
            let operands: Vec<&AnyData> = step.inputs.iter().map(|n| defined(&arrays, n)).collect::<Result<_>>()?;
            let many = chain.steps.len() > 1;
            let (process, output) = step.op.plan(&operands).map_err(|e| if many { in_step(e, i) } else { e })?;
            pipeline.push(process);
            arrays.insert(step.output.clone(), output);
        }
        pipeline.init()?;
        *built = Some(Built { arrays, pipeline, signature });
    }
    let b = built.as_mut().ok_or_else(|| Error::invalid("pipeline", "no chain"))?;
    let before = app.transfer_stats();
    let report = if profile {
        Some(b.pipeline.profile()?)
    } else {
        b.pipeline.run()?;
        None
    };
    record.transfers = (app.transfer_stats() - before).total_calls();
    for (name, template, options) in &chain.outputs {
        let path = output_path(template, file, batch)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
        }
        let array = defined(&b.arrays, name)?;
        array.save(&path, options.as_ref().unwrap_or(&chain.options))?;
        record.written.push((name.clone(), path, array.shape().to_vec(), array.kind().name()));
    }
    // Results nobody saved: small ones (norms, dot products, short vectors) are shown.
    let saved: Vec<&str> = chain.outputs.iter().map(|(n, _, _)| n.as_str()).collect();
    for step in &chain.steps {
        let array = defined(&b.arrays, &step.output)?;
        let used_later = chain.steps.iter().any(|s| s.inputs.contains(&step.output));
        if !saved.contains(&step.output.as_str()) && !used_later {
            let count: usize = array.shape().iter().product();
            let values = if count <= 64 { array.values()? } else { Vec::new() };
            record.values.push((step.output.clone(), array.shape().to_vec(), values));
        }
    }
    Ok(report)
}

/// A named array of the chain (Chain::check makes sure every name used is defined).
fn defined<'a>(arrays: &'a HashMap<String, AnyData>, name: &str) -> Result<&'a AnyData> {
    arrays.get(name).ok_or_else(|| Error::invalid("pipeline", format!("`{name}` is not defined")))
}

/// Prefixes an error from a step with the step's number.
fn in_step(e: Error, i: usize) -> Error {
    match e {
        Error::InvalidArgument { op, reason } => {
            Error::InvalidArgument { op: format!("step {} ({op})", i + 1), reason }
        }
        Error::Shape { op, expected, got } => Error::Shape { op: format!("step {} ({op})", i + 1), expected, got },
        other => other,
    }
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
