//! Running a [`Chain`]: its inputs uploaded, its steps built into one [`Pipeline`] on the device, its outputs
//! saved; once, or once per file of a batch, reusing the built chain while the inputs keep their types and shapes.

use super::any_data::{AnyData, ElementKind, FileSpec, Origin, Precision, kind_for};
use super::ops::{InputGrid, Op};
use super::pipeline_file::Chain;
use crate::{ClApp, Dtype, Error, HostArray, Image, Pipeline, Report, Result, Scale};
use num_complex::Complex64;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The input of a chain that takes each of several files in turn (a directory or glob on the command line).
///
/// ```
/// use cliper::chain::{BatchInput, Chain};
/// let chain = Chain::from_file("pipelines/demo.toml".as_ref())?;
/// let files = vec!["data/phantom_256.png".into()];
/// // Every output of the demo names a fixed file, so a batch needs directories or {stem} templates.
/// assert!(chain.batch_input(|spec| Ok(Some(vec![spec.into()]))).is_err());
/// let batch = BatchInput { input: 0, files };
/// assert_eq!(batch.files.len(), 1);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchInput {
    /// Which of the chain's inputs.
    pub input: usize,
    /// The files, in the order they run.
    pub files: Vec<PathBuf>,
}

/// What a batch run reports as it goes.
///
/// ```
/// use cliper::chain::{Chain, Progress};
/// let chain = Chain::from_file("pipelines/demo.toml".as_ref())?;
/// let mut heard = 0;
/// Chain { outputs: Vec::new(), ..chain }.run(&cliper::ClApp::new()?, None, false, |p| {
///     if let Progress::Finished(_) = p { heard += 1 }
/// })?;
/// assert_eq!(heard, 0); // a single run (no batch) reports no progress
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Debug)]
pub enum Progress<'a> {
    /// This file is next.
    Starting(&'a Path),
    /// This file is done (its record holds the error when it failed).
    Finished(&'a RunRecord),
}

/// What one file (or the single run) produced.
///
/// ```
/// use cliper::chain::Chain;
/// let chain = Chain::from_file("pipelines/demo.toml".as_ref())?;
/// let outcome = Chain { outputs: Vec::new(), ..chain }.run(&cliper::ClApp::new()?, None, false, |_| {})?;
/// let record = &outcome.records[0];
/// assert!(record.input.is_none() && record.written.is_empty() && record.error.is_none());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Debug)]
pub struct RunRecord {
    /// The batch file, or `None` for a single run.
    pub input: Option<PathBuf>,
    /// Saved arrays: name, file, shape, element type.
    pub written: Vec<(String, PathBuf, Vec<usize>, &'static str)>,
    /// Arrays nobody saved or used: name, shape, the values when there are at most 64, and the element type
    /// they were computed in.
    pub values: Vec<(String, Vec<usize>, Vec<Complex64>, ElementKind)>,
    /// Tables nobody saved (`measure`'s): name and table, printed whole.
    pub tables: Vec<(String, crate::Table)>,
    /// Host↔device copies while the chain ran (loading inputs and saving outputs not counted): 0 by design.
    pub transfers: u64,
    /// Why this file failed.
    pub error: Option<Error>,
}

impl RunRecord {
    /// The record of a run on `input` (`None`: the chain's own inputs) before anything happened.
    pub fn new(input: Option<PathBuf>) -> RunRecord {
        RunRecord { input, written: Vec::new(), values: Vec::new(), tables: Vec::new(), transfers: 0, error: None }
    }

    /// The record of a run on `input` that failed with `error` before writing anything.
    pub fn failed(input: Option<PathBuf>, error: Error) -> RunRecord {
        RunRecord { error: Some(error), ..RunRecord::new(input) }
    }
}

/// What a chain run produced: one record per input file, and the profile of the first run.
///
/// ```
/// use cliper::chain::Chain;
/// let chain = Chain::from_file("pipelines/demo.toml".as_ref())?;
/// let outcome = Chain { outputs: Vec::new(), ..chain }.run(&cliper::ClApp::new()?, None, false, |_| {})?;
/// assert_eq!((outcome.records.len(), outcome.failures().count()), (1, 0));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Debug)]
pub struct Outcome {
    /// One record per run, in order.
    pub records: Vec<RunRecord>,
    /// The first run's profile, when asked for.
    pub report: Option<Report>,
}

impl Outcome {
    /// The errors of the runs that failed.
    pub fn failures(&self) -> impl Iterator<Item = &Error> {
        self.records.iter().filter_map(|r| r.error.as_ref())
    }
}

/// The file an output goes to: `{stem}` replaced by the input's file stem; a directory (existing, or written
/// with a trailing `/`) gets the input's file name; in a batch, anything else is an error.
///
/// ```
/// use cliper::chain::output_path;
/// use std::path::Path;
/// let p = output_path("out/{stem}_edges.png", Some(Path::new("scans/a.tif")), true)?;
/// assert_eq!(p, Path::new("out/a_edges.png"));
/// let p = output_path("out/{stem}_smooth.nii.gz", Some(Path::new("scans/brain.nii.gz")), true)?;
/// assert_eq!(p, Path::new("out/brain_smooth.nii.gz"));
/// assert!(output_path("out/edges.png", Some(Path::new("scans/a.tif")), true).is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn output_path(template: &str, input: Option<&Path>, batch: bool) -> Result<PathBuf> {
    // A series folder's stem is its whole name; `brain.nii.gz`'s is `brain`.
    let stem = input.and_then(|p| if p.is_dir() { p.file_name() } else { p.file_stem() }).map(|s| {
        let s = s.to_string_lossy();
        s.strip_suffix(".nii").or_else(|| s.strip_suffix(".NII")).unwrap_or(&s).to_string()
    });
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

/// Creates the folder a file goes into (and its parents), with an error that says which part of the path is in
/// the way when one is a file rather than a folder.
///
/// ```
/// let dir = std::env::temp_dir().join(format!("cliper-doc-parent-{}", std::process::id()));
/// cliper::chain::create_parent(&dir.join("a/b/out.npy"))?;
/// assert!(dir.join("a/b").is_dir());
/// std::fs::write(dir.join("f"), b"")?;
/// let e = cliper::chain::create_parent(&dir.join("f/out.npy")).unwrap_err().to_string();
/// assert!(e.contains("is a file, not a folder"), "{e}");
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create_parent(path: &Path) -> Result<()> {
    let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) else { return Ok(()) };
    std::fs::create_dir_all(dir).map_err(|source| match dir.ancestors().find(|a| a.is_file()) {
        Some(file) => Error::Format {
            path: path.to_path_buf(),
            reason: format!("cannot create its folder: {} is a file, not a folder", file.display()),
        },
        None => Error::Io { path: dir.to_path_buf(), source },
    })
}

/// The device arrays and processes of a built chain, kept for the next file of a batch (or tile).
pub(super) struct Built {
    pub(super) arrays: HashMap<String, AnyData>,
    /// What each array inherits from its input file: colour (inputs read from colour files and results of
    /// operations that keep the channels) and the file's element type (results that are still image data).
    pub(super) origins: HashMap<String, Origin>,
    pub(super) pipeline: Pipeline,
    signature: Vec<(String, &'static str, Vec<usize>, bool)>,
    /// Each step's operation as it was planned: after the colour rule and with millimetres in voxels of the
    /// input it was built for. A file whose steps resolve to other operations (another voxel size) needs another
    /// chain.
    resolved: Vec<Op>,
    /// The device it was built on.
    app: ClApp,
}

impl Built {
    fn pipeline_app_is(&self, app: &ClApp) -> bool {
        self.app.same_as(app)
    }
}

impl Chain {
    /// The batch input, if any: `files_of` turns an input's spec into its files when the spec names several (a
    /// directory or a glob) and gives `None` for a single file. At most one input may be a batch, and every
    /// output must then name one file per input (a directory or a `{stem}` template): both are checked before
    /// any file runs.
    pub fn batch_input(&self, files_of: impl Fn(&str) -> Result<Option<Vec<PathBuf>>>) -> Result<Option<BatchInput>> {
        let mut batch: Option<BatchInput> = None;
        for (i, (name, spec)) in self.inputs.iter().enumerate() {
            if let Some(files) = files_of(spec)? {
                if batch.is_some() {
                    return Err(Error::invalid(
                        "batch",
                        format!("only one input may be a directory or glob; `{name}` is a second"),
                    ));
                }
                batch = Some(BatchInput { input: i, files });
            }
        }
        if let Some(b) = &batch {
            self.run_files(Some(b))?.check()?;
        }
        Ok(batch)
    }

    /// Runs the chain on `app`: once, or once per file of `batch`, reusing the initialised chain while the
    /// inputs keep their shapes and types, the files read ahead and written behind on other threads while the
    /// device runs (`overlap.rs`, within the host memory budget). A failing file is recorded and the rest still
    /// run; `progress` hears of each file as it starts on the device and as its outputs are written, and the
    /// records come back in the batch's order. With `profile` (and a profiling `ClApp`) the first run is
    /// profiled.
    pub fn run(
        &self,
        app: &ClApp,
        batch: Option<&BatchInput>,
        profile: bool,
        progress: impl FnMut(Progress<'_>),
    ) -> Result<Outcome> {
        if let Some(batch) = batch {
            return self.run_on_lanes(std::slice::from_ref(app), batch, profile, progress);
        }
        let (record, report) = self.runner(None)?.run_file(app, None, profile);
        Ok(Outcome { records: vec![record], report })
    }

    /// The chain ready to run file after file (of the input at `batch_input`, or once when `None`) on a device of
    /// the caller's choosing: the other inputs read once, the built chain kept while the files keep their types
    /// and shapes. What [`Chain::run`] does for a batch, and what each device of a pool does with its share.
    ///
    /// ```
    /// use cliper::chain::Chain;
    /// let chain = Chain::from_file("pipelines/demo.toml".as_ref())?;
    /// let chain = Chain { outputs: Vec::new(), ..chain };
    /// let mut runner = chain.runner(None)?;
    /// let (record, _) = runner.run_file(&cliper::ClApp::new()?, None, false);
    /// assert!(record.error.is_none());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn runner(&self, batch_input: Option<usize>) -> Result<ChainRunner<'_>> {
        // Every input but the batch one is read once, before the loop.
        let fixed: Vec<Option<(FileSpec, Image)>> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(i, (_, spec))| match batch_input {
                Some(b) if b == i => Ok(None),
                _ => {
                    let spec = FileSpec::parse(spec);
                    spec.read().map(|host| Some((spec, host)))
                }
            })
            .collect::<Result<_>>()?;
        Ok(ChainRunner { chain: self, batch_input, fixed, built: None })
    }

    /// One run of the chain on `inputs` (in the chain's input order). A chain built for inputs of the same types
    /// and shapes is reused: only the input at `changing` (the batch input) is uploaded again.
    #[allow(clippy::too_many_arguments)]
    fn run_once(
        &self,
        app: &ClApp,
        profile: bool,
        inputs: &[(&FileSpec, &Image)],
        changing: Option<usize>,
        file: Option<&Path>,
        built: &mut Option<Built>,
        record: &mut RunRecord,
    ) -> Result<(Option<Report>, Vec<PendingOutput>)> {
        let batch = changing.is_some();
        let double = self.double_for(&inputs.iter().map(|(_, h)| *h).collect::<Vec<_>>());
        let signature: Vec<(String, &'static str, Vec<usize>, bool)> = self
            .inputs
            .iter()
            .zip(inputs)
            .map(|((name, _), (_, h))| {
                (name.clone(), kind_for(&h.array, double).name(), h.array.shape().to_vec(), h.colour)
            })
            .collect();
        // The built chain serves this file when it was built for the same kinds and shapes and this file's steps
        // resolve to the same operations; what the outputs inherit (geometry, file type, colour) is this file's.
        let reusable = match (built.as_ref(), changing) {
            (Some(b), Some(_)) if b.signature == signature => self.origins_if_same_plan(inputs, b)?,
            _ => None,
        };
        let reused = match (built.as_mut(), changing, reusable) {
            (Some(b), Some(i), Some(origins)) => {
                let missing = || Error::invalid("batch", format!("input {i} is missing"));
                let (spec, host) = inputs.get(i).ok_or_else(missing)?;
                let (name, _) = self.inputs.get(i).ok_or_else(missing)?;
                let values = self.in_precision(host, double)?;
                defined(&b.arrays, name)?.overwrite(&values, &spec.path)?;
                b.origins = origins;
                true
            }
            _ => false,
        };
        if !reused {
            *built = None;
            *built = Some(self.build(app, inputs, double, signature)?);
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
        // The outputs come back to the host here; converting, encoding and writing them is the caller's
        // ([`PendingOutput::save`]), on another thread while the device runs the next file.
        let mut pending = Vec::with_capacity(self.outputs.len());
        for (name, template, options) in &self.outputs {
            let path = output_path(template, file, batch)?;
            create_parent(&path)?;
            let array = defined(&b.arrays, name)?;
            pending.push(PendingOutput {
                name: name.clone(),
                path,
                columns: self.table_columns(b, name)?,
                host: array.to_host()?,
                origin: b.origins.get(name).copied().unwrap_or_default(),
                options: options.clone().unwrap_or_else(|| self.options.clone()),
            });
        }
        // Results nobody saved: small ones (norms, dot products, short vectors) are shown.
        let saved: Vec<&str> = self.outputs.iter().map(|(n, _, _)| n.as_str()).collect();
        for step in &self.steps {
            let array = defined(&b.arrays, &step.output)?;
            let used_later = self.steps.iter().any(|s| s.inputs.contains(&step.output));
            if !saved.contains(&step.output.as_str()) && !used_later {
                if let Some(columns) = self.table_columns(b, &step.output)? {
                    record.tables.push((step.output.clone(), crate::Table::from_host(columns, &array.to_host()?)?));
                    continue;
                }
                let count: usize = array.shape().iter().product();
                let values = if count <= 64 { array.values()? } else { Vec::new() };
                record.values.push((step.output.clone(), array.shape().to_vec(), values, array.kind()));
            }
        }
        Ok((report, pending))
    }

    /// Whether the chain computes in double precision on these inputs ([`Precision::double`]), each input taken
    /// by its [`precision_dtype`].
    pub(super) fn double_for(&self, images: &[&Image]) -> bool {
        self.precision.double(&images.iter().map(|i| precision_dtype(i)).collect::<Vec<_>>())
    }

    /// The type of an input of `dtype` as the chain's precision takes it ([`Chain::in_precision`]): f32/c32 under
    /// `--precision single`, else the file's own.
    fn dtype_in_precision(&self, dtype: Dtype) -> Dtype {
        match (self.precision, dtype) {
            (Precision::Single, Dtype::F32 | Dtype::C32) => dtype,
            (Precision::Single, d) if d.is_complex() => Dtype::C32,
            (Precision::Single, _) => Dtype::F32,
            _ => dtype,
        }
    }

    /// An input's values as the chain computes them: borrowed when the device takes them as they are (loading
    /// then converts exactly, or refuses a value that would change); rounded to f32/c32 under `--precision
    /// single`, and under `auto` for the values of a scan stored as integers with a rescale (each within half an
    /// f32 ulp of nibabel's float64 value, docs/formats.md).
    pub(super) fn in_precision<'a>(&self, image: &'a Image, double: bool) -> Result<std::borrow::Cow<'a, HostArray>> {
        use std::borrow::Cow;
        let host = &image.array;
        let rounds = self.precision == Precision::Single || (image.scaling.is_some() && !double);
        let dtype = if host.dtype().is_complex() { Dtype::C32 } else { Dtype::F32 };
        if !rounds || dtype == host.dtype() {
            return Ok(Cow::Borrowed(host));
        }
        let bytes = (host.shape().iter().product::<usize>() as u64).saturating_mul(dtype.size() as u64);
        let what = format!("rounding the {:?} {} data to {}", host.shape(), host.dtype().name(), dtype.name());
        crate::io::check_host_memory_text(&what, bytes).map_err(|reason| Error::invalid("precision", reason))?;
        if let Some(exact) = crate::io::cast_exact(host, dtype, false).or_else(|| crate::io::round_to_f32(host)) {
            return Ok(Cow::Owned(exact));
        }
        Ok(Cow::Owned(host.cast(dtype, Scale::Raw, false)?))
    }

    /// Uploads the inputs and builds every step's process into one initialised pipeline.
    pub(super) fn build(
        &self,
        app: &ClApp,
        inputs: &[(&FileSpec, &Image)],
        double: bool,
        signature: Vec<(String, &'static str, Vec<usize>, bool)>,
    ) -> Result<Built> {
        let mut arrays = HashMap::new();
        for ((name, _), (spec, image)) in self.inputs.iter().zip(inputs) {
            let host = &self.in_precision(image, double)?;
            arrays.insert(name.clone(), AnyData::upload(app, host, kind_for(host, double), &spec.path)?);
        }
        let mut origins = self.input_origins(inputs);
        let mut pipeline = Pipeline::new(app);
        let mut resolved = Vec::with_capacity(self.steps.len());
        for (i, step) in self.steps.iter().enumerate() {
            let operands: Vec<&AnyData> = step.inputs.iter().map(|n| defined(&arrays, n)).collect::<Result<_>>()?;
            let shapes: Vec<Vec<usize>> = operands.iter().map(|x| x.shape().to_vec()).collect();
            let shape = shapes.first().cloned().unwrap_or_default();
            let (op, from) = self.resolve_step(i, &origins, &shapes)?;
            let (process, output) = op.plan(&operands).map_err(|e| self.in_step(e, i))?;
            origins.insert(step.output.clone(), result_origin(&op, &from, &shape, output.shape()));
            pipeline.push(process);
            arrays.insert(step.output.clone(), output);
            resolved.push(op);
        }
        // Every step is initialised here, together (their programs build at once), after the pipeline has fused
        // what it can: element-wise steps into the step before them (an element-wise step or a convolution).
        // One process per step, so a failing stage names its step.
        pipeline.init_telling().map_err(|(i, e)| self.in_step(e, i))?;
        Ok(Built { arrays, origins, pipeline, signature, resolved, app: app.clone() })
    }

    /// What each input inherits from its file: colour, element type (as the chain's precision takes it) and
    /// geometry.
    fn input_origins(&self, inputs: &[(&FileSpec, &Image)]) -> HashMap<String, Origin> {
        self.inputs
            .iter()
            .zip(inputs)
            .map(|((name, _), (_, image))| {
                let dtype = Some(self.dtype_in_precision(image.array.dtype()));
                let origin = Origin {
                    colour: image.colour,
                    dtype,
                    geometry: image.geometry,
                    scaling: image.scaling,
                    result_dtype: None,
                };
                (name.clone(), origin)
            })
            .collect()
    }

    /// Step `i` as it applies to its inputs (of `shapes`) with their `origins`: the colour rule applied,
    /// millimetres turned into voxels and grids taken from other inputs ([`Op::on_grids`]); with the origins it
    /// read.
    fn resolve_step(
        &self,
        i: usize,
        origins: &HashMap<String, Origin>,
        shapes: &[Vec<usize>],
    ) -> Result<(Op, Vec<Origin>)> {
        let step = self.steps.get(i).ok_or_else(|| Error::invalid("pipeline", format!("no step {}", i + 1)))?;
        let from: Vec<Origin> = step.inputs.iter().map(|n| origins.get(n).copied().unwrap_or_default()).collect();
        let in_colour = from.iter().any(|o| o.colour);
        let geometry = from.first().and_then(|o| o.geometry.as_ref());
        let shape = shapes.first().map_or(&[][..], Vec::as_slice);
        let grids: Vec<InputGrid<'_>> =
            shapes.iter().zip(&from).map(|(shape, o)| (shape.as_slice(), o.geometry.as_ref())).collect();
        let op = step
            .op
            .resolved(shape, in_colour, geometry)
            .and_then(|op| op.on_grids(&grids))
            .map_err(|e| self.in_step(e, i))?;
        // Only values stored as they were read: a rescaled integer file's values are no longer integers.
        let op = op.for_file_type(from.first().filter(|o| o.scaling.is_none()).and_then(|o| o.dtype));
        Ok((op, from))
    }

    /// What the outputs inherit from this batch file's `inputs` when `built`'s steps are what these inputs resolve
    /// them to (the same operations, millimetres included); `None` when the chain must be built again.
    fn origins_if_same_plan(
        &self,
        inputs: &[(&FileSpec, &Image)],
        built: &Built,
    ) -> Result<Option<HashMap<String, Origin>>> {
        let shape_of = |name: &str| defined(&built.arrays, name).map(|x| x.shape().to_vec());
        let mut origins = self.input_origins(inputs);
        for (i, step) in self.steps.iter().enumerate() {
            let shapes: Vec<Vec<usize>> = step.inputs.iter().map(|name| shape_of(name)).collect::<Result<_>>()?;
            let shape = shapes.first().cloned().unwrap_or_default();
            let (op, from) = self.resolve_step(i, &origins, &shapes)?;
            // A result sized by the values (a row per label present) is planned again for every file.
            if built.resolved.get(i) != Some(&op) || op.sized_by_data() {
                return Ok(None);
            }
            origins.insert(step.output.clone(), result_origin(&op, &from, &shape, &shape_of(&step.output)?));
        }
        Ok(Some(origins))
    }

    /// The column names of the array `name` when a step computed it as a table (`measure`), for its first input's
    /// number of axes.
    fn table_columns(&self, b: &Built, name: &str) -> Result<Option<Vec<String>>> {
        let Some((i, step)) = self.steps.iter().enumerate().find(|(_, s)| s.output == name) else { return Ok(None) };
        let ndim = match step.inputs.first() {
            Some(input) => defined(&b.arrays, input)?.shape().len(),
            None => 0,
        };
        Ok(b.resolved.get(i).and_then(|op| op.columns(ndim)))
    }

    /// An error from step `i`, prefixed with the step's number when the chain has several.
    fn in_step(&self, e: Error, i: usize) -> Error {
        if self.steps.len() > 1 { in_step(e, i) } else { e }
    }
}

/// The type an input counts as when the precision is chosen ([`Precision::double`]): its values' own type, except
/// that the values of a scan stored as 8- or 16-bit integers with a rescale count as f32 — single precision holds
/// them within half an ulp, far below the scan's own step (its slope), so `auto` computes them in single (a CT's
/// u16 under intercept −1024 reads as i32, a slope of 0.1 as f64: both compute in f32).
pub(super) fn precision_dtype(image: &Image) -> Dtype {
    let small_integers = |d: Dtype| matches!(d, Dtype::U8 | Dtype::I8 | Dtype::U16 | Dtype::I16);
    match (image.array.dtype(), image.scaling) {
        (Dtype::F64 | Dtype::I32 | Dtype::I64, Some(s)) if small_integers(s.stored) => Dtype::F32,
        (dtype, _) => dtype,
    }
}

/// What the result of `op` (of shape `output`, from inputs of `shape` with origins `from`) inherits: colour when
/// the operation keeps the channels, the file type when the result is still image data of that one type, and
/// the geometry the operation leaves.
fn result_origin(op: &Op, from: &[Origin], shape: &[usize], output: &[usize]) -> Origin {
    let in_colour = from.iter().any(|o| o.colour);
    let first = from.first().copied().unwrap_or_default();
    // The inputs the values come from; the others lend only their grid (resample-from-to's reference).
    let from = from.get(..op.value_inputs().min(from.len())).unwrap_or(from);
    let result_dtype = op.result_dtype().or(first.result_dtype.filter(|_| op.keeps_values()));
    // Labels and masks are not the scan's values: neither its file type nor its rescale applies to them.
    let image_data = !matches!(op, Op::Norm(_) | Op::Dot(_)) && result_dtype.is_none();
    Origin {
        colour: in_colour && op.keeps_colour(shape, output),
        dtype: first.dtype.filter(|_| image_data && from.iter().all(|o| o.dtype == first.dtype)),
        // A stack has a geometry only when every array it joins has the same one.
        geometry: first
            .geometry
            .filter(|_| !matches!(op, Op::Stack(_)) || from.iter().all(|o| o.geometry == first.geometry))
            .and_then(|g| op.geometry(&g, shape, output, in_colour)),
        scaling: first.scaling.filter(|_| image_data && from.iter().all(|o| o.scaling == first.scaling)),
        result_dtype,
    }
}

/// A chain running file after file on one device ([`Chain::runner`]).
///
/// ```
/// use cliper::chain::Chain;
/// let text = "input = { x = 'data/phantom_256.png' }\n[[step]]\nop = 'clip'\nmin = 0\nmax = 100\nin = 'x'\nout = 'y'";
/// let chain = Chain::from_toml(text, "clip.toml".as_ref())?;
/// let app = cliper::ClApp::new()?;
/// let mut runner = chain.runner(Some(0))?; // input 0 changes from run to run
/// for file in ["data/phantom_256.png", "data/phantom_256.tif"] {
///     let (record, _) = runner.run_file(&app, Some(file.as_ref()), false);
///     assert!(record.error.is_none(), "{file}: {:?}", record.error);
/// }
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ChainRunner<'c> {
    chain: &'c Chain,
    batch_input: Option<usize>,
    fixed: Vec<Option<(FileSpec, Image)>>,
    built: Option<Built>,
}

impl<'c> ChainRunner<'c> {
    /// Runs the chain on `app` with `file` as the batch input (`None`: the chain's own inputs), reusing the built
    /// chain when `app` and the input's type and shape are the last run's, and writes its outputs. The record
    /// holds the error of a file that failed; the profile comes back when asked for.
    pub fn run_file(&mut self, app: &ClApp, file: Option<&Path>, profile: bool) -> (RunRecord, Option<Report>) {
        let loaded = file.map(|f| self.loader().load(f));
        let (mut record, pending, report) = self.compute(app, file, loaded, profile);
        save_all(&mut record, pending);
        (record, report)
    }

    /// What reads this runner's batch files, apart from the runner: it may run on other threads while the
    /// runner computes ([`Chain::run`]).
    pub(super) fn loader(&self) -> Loader<'c> {
        let fixed = self.fixed.iter().flatten().map(|(_, image)| precision_dtype(image)).collect();
        let pattern = self.batch_input.and_then(|b| self.chain.inputs.get(b)).map_or("", |(_, p)| p.as_str());
        Loader { chain: self.chain, pattern: FileSpec::parse(pattern), fixed }
    }

    /// The chain on `app` with `loaded` (the batch file `file`, read by [`Loader::load`]) as its batch input: the
    /// record, the outputs on the host still to be written, and the profile when asked for.
    pub(super) fn compute(
        &mut self,
        app: &ClApp,
        file: Option<&Path>,
        loaded: Option<Result<(FileSpec, Image)>>,
        profile: bool,
    ) -> (RunRecord, Vec<PendingOutput>, Option<Report>) {
        let chain = self.chain;
        if self.built.as_ref().is_some_and(|b| !b.pipeline_app_is(app)) {
            self.built = None;
        }
        let mut record = RunRecord::new(file.map(Path::to_path_buf));
        let batch_file = match (self.batch_input, loaded) {
            (Some(b), Some(loaded)) => loaded.map(|(spec, image)| Some((b, spec, image))),
            _ => Ok(None),
        };
        let result = batch_file.and_then(|batch_file| {
            let inputs: Vec<(&FileSpec, &Image)> = self
                .fixed
                .iter()
                .enumerate()
                .filter_map(|(i, f)| match (&batch_file, f) {
                    (Some((b, spec, host)), _) if *b == i => Some((spec, host)),
                    (_, Some((spec, host))) => Some((spec, host)),
                    _ => None,
                })
                .collect();
            let changing = batch_file.as_ref().map(|(b, _, _)| *b);
            chain.run_once(app, profile, &inputs, changing, file, &mut self.built, &mut record)
        });
        match result {
            Ok((report, pending)) => (record, pending, report),
            Err(e) => {
                record.error = Some(e);
                (record, Vec::new(), None)
            }
        }
    }
}

/// Reads a chain's batch files and puts their values in the type the device computes them in — the host work
/// before a file's run, which may go on other threads while the device runs another file.
pub(super) struct Loader<'c> {
    chain: &'c Chain,
    pattern: FileSpec,
    /// The types the chain's other inputs count as when the precision is chosen ([`precision_dtype`]).
    fixed: Vec<Dtype>,
}

impl Loader<'_> {
    /// The batch file `file`, read, with its values converted to the device's element type when that is exact
    /// (or the precision rounds them, [`Chain::in_precision`]); left as read otherwise, so that uploading names
    /// the value that would change.
    pub(super) fn load(&self, file: &Path) -> Result<(FileSpec, Image)> {
        let spec = self.pattern.with_path(file.to_path_buf());
        let mut image = spec.read()?;
        let mut dtypes = self.fixed.clone();
        dtypes.push(precision_dtype(&image));
        let double = self.chain.precision.double(&dtypes);
        // The values in the type the precision takes them in (a scan's rescaled values rounded to f32): the
        // precision chosen from them, and every origin, stay the same. Exact conversions to the device's type
        // happen on upload.
        if let std::borrow::Cow::Owned(values) = self.chain.in_precision(&image, double)? {
            image.array = values;
        }
        Ok((spec, image))
    }
}

/// An output of one run, on the host, still to be converted, encoded and written ([`PendingOutput::save`]).
pub(super) struct PendingOutput {
    name: String,
    path: PathBuf,
    /// The column names when the array is a table: saved as CSV or JSON.
    columns: Option<Vec<String>>,
    host: HostArray,
    origin: Origin,
    options: super::any_data::OutputOptions,
}

impl PendingOutput {
    /// Host bytes it holds.
    pub(super) fn bytes(&self) -> u64 {
        self.host.bytes()
    }

    /// Writes it by [`save_converted`](super::any_data::save_converted): name, file, shape and the type the file holds.
    pub(super) fn save(self) -> Result<(String, PathBuf, Vec<usize>, &'static str)> {
        let shape = self.host.shape().to_vec();
        let text =
            self.path.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv") || e.eq_ignore_ascii_case("json"));
        if let (Some(columns), true) = (self.columns, text) {
            crate::Table::from_host(columns, &self.host)?.save(&self.path)?;
            return Ok((self.name, self.path, shape, "table"));
        }
        let dtype = super::any_data::save_converted(&self.path, self.host, self.origin, &self.options)?;
        Ok((self.name, self.path, shape, dtype.name()))
    }
}

/// Writes `pending` in order into `record` — stopping at the first that fails, whose error the record then holds.
pub(super) fn save_all(record: &mut RunRecord, pending: Vec<PendingOutput>) {
    for output in pending {
        match output.save() {
            Ok(written) => record.written.push(written),
            Err(e) => {
                record.error = Some(e);
                return;
            }
        }
    }
}

/// A named array of the chain (Chain::check makes sure every name used is defined).
pub(super) fn defined<'a>(arrays: &'a HashMap<String, AnyData>, name: &str) -> Result<&'a AnyData> {
    arrays.get(name).ok_or_else(|| Error::invalid("pipeline", format!("`{name}` is not defined")))
}

/// Prefixes an error from a step with the step's number.
fn in_step(e: Error, i: usize) -> Error {
    e.with_op(|op| format!("step {} ({op})", i + 1))
}
