//! Chains on images larger than the device's memory budget: the input is cut along one axis into slabs ("tiles"),
//! each read with the context (halo) its steps need, run through the whole chain on the device, and the part of
//! every output that the tile computes exactly is written out. Results equal the untiled run's bit for bit: every
//! step is local ([`Op::reach`]), the halo is the sum of the steps' reaches, and at the image's edges a tile holds
//! the real edge, so border rules see what they would see untiled.

use super::any_data::{AnyData, ElementKind, FileSpec, Origin, OutputOptions, kind_for, save_converted};
use super::ops::{DotArgs, NormArgs, Op, PadArgs, Widths};
use super::pipeline_file::{Chain, Step};
use super::run::{Built, defined, output_path};
use crate::io::Image;
use crate::{ClApp, Dtype, Error, HostArray, Result, Scale, SlabFile, SlabWriter};
use num_complex::Complex64;
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How a chain is cut: along `axis`, tiles of `rows` output indices (the last may be shorter) read with `halo`
/// indices of context on each side, so that one tile's arrays fit `budget` bytes of device memory.
///
/// ```
/// let plan = cliper::chain::TilePlan { axis: 0, extent: 1000, rows: 300, halo: 6, budget: 1 << 24 };
/// assert_eq!(plan.tiles(), 4);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TilePlan {
    /// The axis the input is cut along (the first, or the rows of a colour image).
    pub axis: usize,
    /// The input's extent along it.
    pub extent: usize,
    /// Output indices per tile.
    pub rows: usize,
    /// Context read on each side of a tile: the sum of the steps' reaches.
    pub halo: usize,
    /// Device bytes a tile's arrays may take.
    pub budget: u64,
}

impl TilePlan {
    /// Tiles the plan takes.
    pub fn tiles(&self) -> usize {
        self.extent.div_ceil(self.rows.max(1))
    }
}

/// Where one tile's time went, in seconds: reading the input slab (file and conversion), the copy to the device,
/// the chain on the device, the copies back, and writing the outputs.
///
/// ```
/// let t = cliper::chain::TileTiming { rows: 0..100, compute_s: 0.5, ..Default::default() };
/// assert_eq!(t.read_s + t.upload_s + t.compute_s + t.download_s + t.write_s, 0.5);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TileTiming {
    /// Output indices this tile produced along the cut axis.
    pub rows: Range<usize>,
    /// The device that ran it (`P:D` and name).
    pub device: String,
    /// Reading the slab with its halo from the source.
    pub read_s: f64,
    /// The copy to the device (and, the first time or after a change of shape, building the chain).
    pub upload_s: f64,
    /// The chain on the device.
    pub compute_s: f64,
    /// The outputs' copies to the host.
    pub download_s: f64,
    /// Writing (or gathering) the outputs' rows.
    pub write_s: f64,
    /// Time the device's worker spent waiting, before this tile, for its slab to be read and for the tile
    /// before to be written: where the three overlapping stages are not overlapped.
    pub wait_s: f64,
}

/// What a tiled run reports as it goes.
///
/// ```
/// use cliper::chain::{TilePlan, TileProgress};
/// let plan = TilePlan { axis: 0, extent: 10, rows: 4, halo: 1, budget: 1 << 20 };
/// let say = |p: TileProgress| match p {
///     TileProgress::Planned(plan) => format!("{} tiles", plan.tiles()),
///     TileProgress::Tile(t) => format!("rows {:?}", t.rows),
///     TileProgress::Shrunk(rows) => format!("now {rows} rows"),
/// };
/// assert_eq!(say(TileProgress::Planned(&plan)), "3 tiles");
/// ```
#[derive(Debug)]
pub enum TileProgress<'a> {
    /// The plan, before the first tile.
    Planned(&'a TilePlan),
    /// A tile is done.
    Tile(&'a TileTiming),
    /// A tile did not fit the device: it runs again in tiles of this many rows.
    Shrunk(usize),
}

/// What a tiled run did: the plan, each tile's timing, and the files written (name, file, shape, element type).
///
/// ```
/// use cliper::chain::{TilePlan, TiledOutcome};
/// let plan = TilePlan { axis: 0, extent: 10, rows: 10, halo: 0, budget: 1 << 20 };
/// let outcome = TiledOutcome { plan, tiles: Vec::new(), written: Vec::new(), values: Vec::new(), save_s: 0.0 };
/// let seconds: f64 = outcome.tiles.iter().map(|t| t.compute_s).sum();
/// assert_eq!(seconds, 0.0);
/// ```
#[derive(Debug)]
pub struct TiledOutcome {
    /// The plan (its `rows` after any shrinking).
    pub plan: TilePlan,
    /// One entry per tile, in order.
    pub tiles: Vec<TileTiming>,
    /// The outputs saved: name, file, shape, element type.
    pub written: Vec<(String, PathBuf, Vec<usize>, &'static str)>,
    /// The reductions that end the chain (norm, dot over everything): name, value, and the element kind it was
    /// computed in.
    pub values: Vec<(String, Complex64, ElementKind)>,
    /// Seconds spent completing the outputs after the last tile: flushing streamed files to disk, saving
    /// gathered ones.
    pub save_s: f64,
}

/// The input of a tiled run: a RAW or NPY file read slab by slab, or an image in host memory.
///
/// ```
/// use cliper::chain::{FileSpec, TileInput};
/// // A PNG is read whole into host memory (only its tiles go to the device); NPY and RAW files slab by slab.
/// let input = TileInput::open(&FileSpec::parse("data/phantom_256.png"))?;
/// assert!(matches!(input, TileInput::Image(_)) && input.shape() == [256, 256]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Debug)]
pub enum TileInput {
    /// A file read a slab at a time ([`SlabFile`]).
    File(SlabFile),
    /// An image already in host memory (any format the readers read; only its tiles go to the device).
    Image(Image),
}

impl TileInput {
    /// The input a chain's file spec names: NPY, uncompressed grey NIfTI and grey TIFF files (strips of a page,
    /// pages of a stack) slab by slab, other formats read whole into host memory.
    pub fn open(spec: &FileSpec) -> Result<TileInput> {
        match TileInput::open_slabs(spec)? {
            Some(input) => Ok(input),
            None => spec.read().map(TileInput::Image),
        }
    }

    /// The input as a file read slab by slab — NPY, uncompressed grey NIfTI, grey TIFF — opened from its header
    /// alone; `None` for inputs that must be read whole.
    pub fn open_slabs(spec: &FileSpec) -> Result<Option<TileInput>> {
        if spec.variable.is_some() {
            return Ok(None);
        }
        let name = spec.path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_ascii_lowercase();
        let file = if name.ends_with(".npy") {
            Some(SlabFile::open(&spec.path)?)
        } else if name.ends_with(".nii") {
            SlabFile::open_nifti(&spec.path)?
        } else if name.ends_with(".tif") || name.ends_with(".tiff") {
            SlabFile::open_tiff(&spec.path)?
        } else {
            None
        };
        Ok(file.map(TileInput::File))
    }

    /// The whole input's shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            TileInput::File(f) => f.shape(),
            TileInput::Image(i) => i.array.shape(),
        }
    }

    /// The element type the input holds.
    pub fn dtype(&self) -> Dtype {
        match self {
            TileInput::File(f) => f.dtype(),
            TileInput::Image(i) => i.array.dtype(),
        }
    }

    fn colour(&self) -> bool {
        matches!(self, TileInput::Image(Image { colour: true, .. }))
    }

    fn image(&self, axis: usize, rows: Range<usize>) -> Result<Image> {
        match self {
            TileInput::File(f) => {
                Ok(Image { array: f.read(axis, rows)?, colour: false, geometry: f.geometry().copied(), scaling: None })
            }
            TileInput::Image(i) => {
                let array = i.array.slab(axis, rows.clone()).ok_or_else(|| {
                    Error::invalid("tiles", format!("rows {rows:?} of axis {axis} are outside {:?}", i.array.shape()))
                })?;
                Ok(Image { array, colour: i.colour, geometry: i.geometry, scaling: i.scaling })
            }
        }
    }
}

/// Where one output goes: streamed slab by slab into an NPY file (values as they are or rounded, the file's
/// type known up front), or gathered in host memory and saved whole (every other format, min–max scaling).
/// Tiles from several devices put their rows at once: a streamed file is written at positions (its lock is held
/// only to make the writer), a gathered array is copied into under its lock.
enum Sink {
    /// The writer is made at the first tile, when the computing type is known.
    Stream {
        path: PathBuf,
        writer: Mutex<Option<Arc<StreamFile>>>,
        dtype: Option<Dtype>,
        scale: Scale,
        clip: bool,
    },
    Gather {
        array: Mutex<Option<HostArray>>,
    },
}

/// A streamed output: its writer, full shape and element type.
struct StreamFile {
    writer: SlabWriter,
    shape: Vec<usize>,
    dtype: Dtype,
}

/// An output array's frame along the cut axis: elements its pad steps added before and after the input's.
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    before: usize,
    after: usize,
}

impl Chain {
    /// The memory a chain on `input` would take on `app`'s device in one go, and whether that exceeds what is
    /// free under [`ClApp::memory_limit`] — in which case [`Chain::run_tiled`] is the way to run it.
    ///
    /// The estimate: every array of the chain alive at once, at the precision it computes in, and half as much
    /// again for the processes' own scratch. A run whose host buffers — the input in its own type, its copy in
    /// the computing type and each output's copy back — would not fit the host budget
    /// ([`crate::HostBudget`]) runs in tiles too.
    pub fn needs_tiles(&self, app: &ClApp, shape: &[usize], dtype: Dtype) -> bool {
        let per_element = self.device_bytes(dtype);
        let elements: usize = shape.iter().product();
        let double = self.precision.double(&[dtype]);
        let element = if double { 8.0 } else { 4.0 } * if dtype.is_complex() { 2.0 } else { 1.0 };
        let host = elements as f64 * (dtype.size() as f64 + element * (1 + self.outputs.len()) as f64);
        let host_budget = crate::HostBudget::current().map_or(u64::MAX, |b| b.bytes);
        (elements as f64 * per_element) as u64 > free_bytes(app) || host as u64 > host_budget
    }

    /// Device bytes per input element: every array of the chain plus half again for scratch.
    fn device_bytes(&self, dtype: Dtype) -> f64 {
        let double = self.precision.double(&[dtype]);
        let size = if double { 8.0 } else { 4.0 } * if dtype.is_complex() { 2.0 } else { 1.0 };
        size * (self.inputs.len() + self.steps.len()) as f64 * 1.5
    }

    /// Host bytes per row along `axis` of a tiled run on one device: the slab read (the file's type) and its copy
    /// in the computing type, for the tile running and the next one being read, and each output's copy back and
    /// the rows converted for writing.
    fn host_bytes_per_row(&self, shape: &[usize], axis: usize, dtype: Dtype, double: bool) -> f64 {
        let row = shape.iter().product::<usize>() / shape.get(axis).copied().unwrap_or(1).max(1);
        let element = if double { 8.0 } else { 4.0 } * if dtype.is_complex() { 2.0 } else { 1.0 };
        row as f64 * (2.0 * (dtype.size() as f64 + element) + self.outputs.len() as f64 * 2.0 * element)
    }

    /// Outputs gathered in host memory (every format but NPY, min–max scaling) must fit the host budget whole
    /// (in the computing type; pad steps' rows aside): refused up front, naming the output, rather than after the
    /// tiles ran.
    fn check_gathered_outputs(
        &self,
        shape: &[usize],
        double: bool,
        complex: bool,
        host: &crate::HostBudget,
    ) -> Result<()> {
        let element = if double { 8 } else { 4 } * if complex { 2 } else { 1 };
        let bytes = (shape.iter().product::<usize>() as u64).saturating_mul(element);
        for (name, template, options) in &self.outputs {
            let path = output_path(template, None, false)?;
            if !streams(&path, options.as_ref().unwrap_or(&self.options)) {
                let what = format!(
                    "output `{name}`, {shape:?} gathered in host memory to be saved whole (only NPY outputs are written tile by tile)"
                );
                host.check(&path, &what, bytes)?;
            }
        }
        Ok(())
    }

    /// Runs a chain of local steps on one input larger than the device's memory budget, tile by tile (see the
    /// module's documentation), writing the chain's outputs. `input` is the chain's own input when `None` (NPY
    /// files are read slab by slab; other formats whole into host memory). NPY outputs (values as they are or
    /// rounded) are written slab by slab; other outputs are gathered in host memory and saved once at the end.
    ///
    /// Refused with an error naming why: more than one input, a step that needs the whole image
    /// ([`Op::reach`]), a budget too small for one tile's halo.
    ///
    /// ```
    /// use cliper::chain::{Chain, TileProgress};
    /// let dir = std::env::temp_dir().join(format!("cliper-doc-tiled-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let image = ndarray::Array::from_shape_fn((300, 40), |(i, j)| ((i * 7 + j * 3) % 11) as f32).into_dyn();
    /// cliper::write_npy(dir.join("in.npy"), &cliper::HostArray::F32(image))?;
    /// let text = format!(
    ///     "input = {{ x = '{0}/in.npy' }}\n[[step]]\nop = 'convolve'\nkernel = 'gaussian:2'\nin = 'x'\nout = 'y'\n\
    ///      [output]\ny = '{0}/out.npy'\n",
    ///     dir.display()
    /// );
    /// let chain = Chain::from_toml(&text, "blur.toml".as_ref())?;
    /// // 40 KiB of device memory: 7 tiles of 43 rows (each read with 17 more on both sides).
    /// let app = cliper::ClApp::builder().memory_limit(40 << 10).build()?;
    /// let mut tiles = 0;
    /// let outcome = chain.run_tiled(&app, None, |p| if let TileProgress::Tile(_) = p { tiles += 1 })?;
    /// assert!(tiles > 1 && outcome.plan.halo >= 17);
    /// assert_eq!(outcome.written[0].2, vec![300, 40]);
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_tiled(
        &self,
        app: &ClApp,
        input: Option<TileInput>,
        progress: impl FnMut(TileProgress<'_>),
    ) -> Result<TiledOutcome> {
        self.tiled(std::slice::from_ref(app), input, progress)
    }

    /// [`Chain::run_tiled`] with the tiles spread over the devices of `pool`: one worker per device takes the
    /// next tile when free (each with its own chain built for its device, reading the next tile while it runs
    /// one and writing the last one's outputs); tiles are sized for the device with the least memory free. The
    /// files written are those one device writes, bit for bit when the devices compute alike (the same kind of
    /// device); reductions combine their per-tile partials in tile order whichever device ran each.
    ///
    /// ```
    /// use cliper::chain::{Chain, TileProgress};
    /// let dir = std::env::temp_dir().join(format!("cliper-doc-tiled-pool-{}", std::process::id()));
    /// std::fs::create_dir_all(&dir)?;
    /// let image = ndarray::Array::from_shape_fn((300, 40), |(i, j)| ((i * 7 + j * 3) % 11) as f32).into_dyn();
    /// cliper::write_npy(dir.join("in.npy"), &cliper::HostArray::F32(image))?;
    /// let text = format!(
    ///     "input = {{ x = '{0}/in.npy' }}\n[[step]]\nop = 'convolve'\nkernel = 'gaussian:2'\nin = 'x'\nout = 'y'\n\
    ///      [output]\ny = '{0}/out.npy'\n",
    ///     dir.display()
    /// );
    /// let chain = Chain::from_toml(&text, "blur.toml".as_ref())?;
    /// let apps = cliper::ClApp::builder().memory_limit(40 << 10).build_all()?;
    /// let pool = cliper::DevicePool::new(apps)?;
    /// let outcome = chain.run_tiled_on(&pool, None, |_| {})?;
    /// assert!(outcome.tiles.len() > 1 && outcome.tiles.windows(2).all(|t| t[0].rows.end == t[1].rows.start));
    /// # std::fs::remove_dir_all(&dir).ok();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_tiled_on(
        &self,
        pool: &crate::DevicePool,
        input: Option<TileInput>,
        progress: impl FnMut(TileProgress<'_>),
    ) -> Result<TiledOutcome> {
        self.tiled(pool.apps(), input, progress)
    }

    /// [`Chain::run_tiled_on`] these devices.
    fn tiled(
        &self,
        apps: &[ClApp],
        input: Option<TileInput>,
        progress: impl FnMut(TileProgress<'_>),
    ) -> Result<TiledOutcome> {
        // Reductions to a number that end the chain (norm, dot over everything) run per tile on the rows it
        // computes exactly, and their partials combine as the device reduction's do; the rest runs in tiles.
        let final_reduction = |step: &Step| {
            matches!(step.op, Op::Norm(NormArgs { axis: None, .. }) | Op::Dot(DotArgs { axis: None, .. }))
                && !self.steps.iter().any(|s| s.inputs.contains(&step.output))
        };
        let (reductions, spatial): (Vec<Step>, Vec<Step>) =
            self.steps.iter().cloned().partition(|s| final_reduction(s));
        if let Some((name, _, _)) = self.outputs.iter().find(|(n, _, _)| reductions.iter().any(|r| &r.output == n)) {
            return Err(Error::invalid(
                "tiles",
                format!("`{name}` is a number a tiled run reports rather than saves; leave it out of the outputs"),
            ));
        }
        Chain { steps: spatial, ..self.clone() }.tiles_with(apps, input, &reductions, progress)
    }

    /// [`Chain::run_tiled_on`] on a chain of local steps, with `reductions` of its arrays to combine over the
    /// tiles.
    fn tiles_with(
        &self,
        apps: &[ClApp],
        input: Option<TileInput>,
        reductions: &[Step],
        mut progress: impl FnMut(TileProgress<'_>),
    ) -> Result<TiledOutcome> {
        let [(input_name, input_spec)] = self.inputs.as_slice() else {
            return Err(Error::invalid(
                "tiles",
                format!("a chain runs in tiles from one input; this one has {}", self.inputs.len()),
            ));
        };
        let Some(first_app) = apps.first() else {
            return Err(Error::invalid("tiles", "no device to run the tiles on"));
        };
        let spec = FileSpec::parse(input_spec);
        let source = match input {
            Some(i) => i,
            None => TileInput::open(&spec)?,
        };
        let shape = source.shape().to_vec();
        let colour = source.colour();
        let geometry = match &source {
            TileInput::Image(i) => i.geometry,
            TileInput::File(f) => f.geometry().copied(),
        };
        // The rows of a colour image (channels on axis −3); otherwise the first axis.
        let axis = if colour && shape.len() == 3 { 1 } else { 0 };
        let extent = shape.get(axis).copied().unwrap_or(1);
        let (halo, frames) = self.reaches(input_name, &shape, axis, colour, geometry.as_ref())?;
        let double = self.precision.double(&[source.dtype()]);
        let mut built: Option<(usize, bool, bool, Built)> = None;
        // What one row costs on the device, measured: the chain built on a probe tile from the top (its arrays and
        // the processes' scratch, all allocated when it is built), with a tenth more for safety. Tiles are sized
        // for the device with the least memory free.
        let budget = apps.iter().map(free_bytes).min().unwrap_or(0);
        let probe = extent.min(2 * halo + 1);
        let probe = Probe { app: first_app, spec: &spec, source: &source, axis, rows: probe, halo, double };
        let device_per_row = self.row_cost(&probe, &mut built)?;
        let probe = probe.rows;
        let host = crate::HostBudget::current()?;
        let host_per_row = self.host_bytes_per_row(&shape, axis, source.dtype(), double) * apps.len() as f64;
        self.check_gathered_outputs(&shape, double, source.dtype().is_complex(), &host)?;
        let sizes = TileSizes { extent, halo };
        let device_fit = (budget as f64 / device_per_row.max(1.0)) as usize;
        let host_fit = (host.bytes as f64 / host_per_row.max(1.0)) as usize;
        let smallest = sizes.smallest();
        if device_fit < smallest {
            return Err(Error::OutOfMemory {
                what: sizes.describe(&shape, axis),
                bytes: (smallest as f64 * device_per_row).ceil().min(u64::MAX as f64) as u64,
                limit: format!(
                    "{budget} bytes of device memory are free under the limit of {} (a row takes {} bytes, measured \
                     on a tile of {probe} rows)",
                    first_app.memory_limit(),
                    device_per_row.ceil()
                ),
            });
        }
        if host_fit < smallest {
            return Err(Error::HostMemory {
                path: spec.path.clone(),
                what: format!("{} (its buffers on the host)", sizes.describe(&shape, axis)),
                bytes: (smallest as f64 * host_per_row).ceil().min(u64::MAX as f64) as u64,
                budget: host.bytes,
                source_of_budget: host.source,
            });
        }
        // Tiles of at most `TILE_INPUT_MOST` bytes of input, so that reading, the device and writing overlap.
        let row_bytes = shape.iter().product::<usize>() / extent.max(1) * source.dtype().size();
        let overlap_fit = (TILE_INPUT_MOST / row_bytes.max(1)).max(smallest);
        let fit = device_fit.min(host_fit).min(overlap_fit);
        let mut plan = TilePlan { axis, extent, rows: sizes.rows(fit), halo, budget };
        progress(TileProgress::Planned(&plan));
        let tiles: std::collections::VecDeque<Range<usize>> =
            (0..extent).step_by(plan.rows).map(|start| start..extent.min(start + plan.rows)).collect();
        let shared = Shared {
            chain: self,
            spec: &spec,
            source: &source,
            axis,
            extent,
            halo,
            double,
            frames: &frames,
            reductions,
            queue: Mutex::new(tiles),
            sinks: self.sinks()?,
            origins: Mutex::new(HashMap::new()),
            partials: Mutex::new(Vec::new()),
            failed: AtomicBool::new(false),
        };
        let timings = run_workers(apps, &shared, built.take(), &mut plan, &mut progress)?;
        let Shared { sinks, origins, partials, .. } = shared;
        let clock = Instant::now();
        let written = self.write_outputs(sinks, origins.into_inner().unwrap_or_else(|p| p.into_inner()))?;
        let values = combine(reductions, partials.into_inner().unwrap_or_else(|p| p.into_inner()))?;
        Ok(TiledOutcome { plan, tiles: timings, written, values, save_s: clock.elapsed().as_secs_f64() })
    }

    /// What one row of a tile costs on the device, measured: the chain built on a probe tile from the top (its
    /// arrays and the processes' scratch, all allocated when it is built), with a tenth more for safety. The chain
    /// built is kept in `built` for the first device.
    fn row_cost(&self, probe: &Probe<'_>, built: &mut Option<(usize, bool, bool, Built)>) -> Result<f64> {
        let Probe { app, spec, source, axis, rows, halo, double } = *probe;
        let shape = source.shape();
        let extent = shape.get(axis).copied().unwrap_or(1);
        let before = app.memory_stats().live_bytes;
        let image = source.image(axis, 0..rows)?;
        let probed = self.tile_chain(app, spec, &image, (rows, true, rows == extent), double, built);
        drop(image);
        match probed {
            Ok(_) => Ok((app.memory_stats().live_bytes.saturating_sub(before) as f64 / rows as f64) * 1.1),
            // Not even the smallest tile that holds the context fits: the allocation that failed says by how much.
            Err(Error::OutOfMemory { what, bytes, limit }) => Err(Error::OutOfMemory {
                what: format!(
                    "the smallest tile of {shape:?} along axis {axis} ({rows} rows of {extent}: {halo} rows of context \
                     on each side and 1 computed), built to measure a row's cost, did not fit: {what}"
                ),
                bytes,
                limit,
            }),
            Err(e) => Err(e),
        }
    }

    /// Writes the gathered outputs: each output's name, path, shape and the type written.
    fn write_outputs(
        &self,
        mut sinks: HashMap<String, Sink>,
        origins: HashMap<String, Origin>,
    ) -> Result<Vec<WrittenOutput>> {
        let mut written = Vec::new();
        for (name, template, options) in &self.outputs {
            let path = output_path(template, None, false)?;
            let sink = sinks.remove(name).ok_or_else(|| Error::invalid("tiles", format!("no output `{name}`")))?;
            let origin = origins.get(name).copied().unwrap_or_default();
            let options = options.as_ref().unwrap_or(&self.options);
            let (shape, dtype) = sink.finish(&path, origin, options)?;
            written.push((name.clone(), path, shape, dtype.name()));
        }
        Ok(written)
    }

    /// The summed halo along `axis` and each array's frame, or why a step cannot run in tiles.
    fn reaches(
        &self,
        input: &str,
        shape: &[usize],
        axis: usize,
        colour: bool,
        geometry: Option<&crate::Geometry>,
    ) -> Result<(usize, HashMap<String, Frame>)> {
        let mut frames = HashMap::from([(input.to_string(), Frame::default())]);
        let mut halo = 0;
        for (i, step) in self.steps.iter().enumerate() {
            let op = step.op.resolved(shape, colour, geometry)?;
            let reach = op.reach(shape, axis).map_err(|e| match e {
                Error::InvalidArgument { op, reason } => {
                    Error::InvalidArgument { op: format!("step {} ({op})", i + 1), reason }
                }
                other => other,
            })?;
            let from = step.inputs.first().and_then(|n| frames.get(n)).copied().unwrap_or_default();
            frames.insert(
                step.output.clone(),
                Frame { before: from.before + reach.pad.0, after: from.after + reach.pad.1 },
            );
            // A pad step mirrors or repeats up to its width of rows at the image's edge: a tile holds them.
            halo += reach.halo + if reach.pad != (0, 0) { reach.pad.0.max(reach.pad.1) } else { 0 };
        }
        Ok((halo, frames))
    }

    /// One sink per output: NPY files taking their rows as they come, when their values convert row by row.
    fn sinks(&self) -> Result<HashMap<String, Sink>> {
        let mut sinks = HashMap::new();
        for (name, template, options) in &self.outputs {
            let path = output_path(template, None, false)?;
            super::run::create_parent(&path)?;
            let options = options.as_ref().unwrap_or(&self.options);
            let scale = options.scale.unwrap_or(Scale::Raw);
            let sink = if streams(&path, options) {
                Sink::Stream { path, writer: Mutex::new(None), dtype: options.dtype, scale, clip: options.clip }
            } else {
                Sink::Gather { array: Mutex::new(None) }
            };
            sinks.insert(name.clone(), sink);
        }
        Ok(sinks)
    }

    /// The chain built for a tile of `image` (rows `key.0`; at the input's first / last rows per `key.1` /
    /// `key.2`, where pad steps add their rows), reusing the last one when the key is the same.
    fn tile_chain<'b>(
        &self,
        app: &ClApp,
        spec: &FileSpec,
        image: &Image,
        key: (usize, bool, bool),
        double: bool,
        built: &'b mut Option<(usize, bool, bool, Built)>,
    ) -> Result<&'b mut Built> {
        let same = built.as_ref().is_some_and(|(r, a, b, _)| (*r, *a, *b) == key);
        if same {
            if let (Some((_, _, _, b)), Some((name, _))) = (built.as_mut(), self.inputs.first()) {
                let values = self.in_precision(image, double)?;
                defined(&b.arrays, name)?.overwrite(&values, &spec.path)?;
            }
        } else {
            *built = None;
            let shape = image.array.shape().to_vec();
            let axis = if image.colour && shape.len() == 3 { 1 } else { 0 };
            let steps = self
                .steps
                .iter()
                .map(|s| -> Result<Step> {
                    let op = match (&s.op, image.colour) {
                        (Op::Pad(_), true) => s.op.for_colour(&shape)?,
                        _ => s.op.clone(),
                    };
                    let op = match op {
                        Op::Pad(pad) => {
                            let mut pairs = match pad.width.0.as_slice() {
                                [one] => vec![*one; shape.len()],
                                many => many.to_vec(),
                            };
                            if let Some(pair) = pairs.get_mut(axis) {
                                *pair = (if key.1 { pair.0 } else { 0 }, if key.2 { pair.1 } else { 0 });
                            }
                            Op::Pad(PadArgs { width: Widths(pairs), ..pad })
                        }
                        other => other,
                    };
                    Ok(Step { op, ..s.clone() })
                })
                .collect::<Result<Vec<_>>>()?;
            let chain = Chain { steps, ..self.clone() };
            let host = self.in_precision(image, double)?;
            let signature = vec![(
                self.inputs.first().map(|(n, _)| n.clone()).unwrap_or_default(),
                kind_for(&host, double).name(),
                shape,
                image.colour,
            )];
            let b = chain.build(app, &[(spec, image)], double, signature)?;
            *built = Some((key.0, key.1, key.2, b));
        }
        built.as_mut().map(|(_, _, _, b)| b).ok_or_else(|| Error::invalid("tiles", "no chain was built"))
    }
}

/// The most input a tile reads, in bytes, however much memory is free: the three stages of a tile (reading, the
/// device, writing) overlap only across tiles, so a few large tiles leave the device waiting at both ends. On an
/// H200 (16 GiB through Gaussian → Sobel → threshold, tmpfs): tiles of 1.4 GB took 4.7 s, of 0.75 GB 4.2–4.9 s,
/// of 0.37 GB 4.6 s, of 0.18 GB 5.7 s (reads of small slabs slow down); on an H100, two tiles of 8 GB took 30 s.
const TILE_INPUT_MOST: usize = 512 << 20;

/// What a tile worker reports to the thread that started the run.
enum Event {
    /// A tile is done (its outputs written).
    Tile(TileTiming),
    /// A tile did not fit its device: it was split into tiles of this many rows (and fewer).
    Shrunk(usize),
}

/// A tile's outputs on their way to the files: name, host array, local rows, global first row, global extent.
type Parts = Vec<(String, HostArray, Range<usize>, usize, usize)>;

/// One tile's reductions: its first row, then one value and the kind it was computed in per reduction.
type TilePartials = (usize, Vec<(Complex64, ElementKind)>);

/// What the tile workers share: the run's constants, the tiles not yet taken, the outputs and the reductions'
/// per-tile partials (tile start, one value and kind per reduction).
struct Shared<'a> {
    chain: &'a Chain,
    spec: &'a FileSpec,
    source: &'a TileInput,
    axis: usize,
    extent: usize,
    halo: usize,
    double: bool,
    frames: &'a HashMap<String, Frame>,
    reductions: &'a [Step],
    queue: Mutex<std::collections::VecDeque<Range<usize>>>,
    sinks: HashMap<String, Sink>,
    origins: Mutex<HashMap<String, Origin>>,
    partials: Mutex<Vec<TilePartials>>,
    failed: AtomicBool,
}

impl Shared<'_> {
    /// The next tile to run, unless a worker has failed.
    fn claim(&self) -> Option<Range<usize>> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front()
    }

    /// Rows `rows` with the halo on each side, within the input.
    fn with_halo(&self, rows: &Range<usize>) -> Range<usize> {
        rows.start.saturating_sub(self.halo)..self.extent.min(rows.end + self.halo)
    }

    /// Where an array's rows that the tile of output rows `start..end`, read from `lo`, computes exactly lie:
    /// (local rows, global first row, global extent).
    fn interior(
        &self,
        name: &str,
        local_extent: usize,
        lo: usize,
        rows: &Range<usize>,
    ) -> Result<(Range<usize>, usize, usize)> {
        let frame = self.frames.get(name).copied().unwrap_or_default();
        let total = self.extent + frame.before + frame.after;
        // This tile's local index 0 along the axis is this array's global index `first`.
        let applied = if lo == 0 { frame.before } else { 0 };
        let first = lo + frame.before - applied;
        let from = if rows.start == 0 { 0 } else { rows.start + frame.before };
        let to = if rows.end == self.extent { total } else { rows.end + frame.before };
        if from < first || to - first > local_extent {
            return Err(Error::invalid(
                "tiles",
                format!("`{name}` has {local_extent} rows in this tile and misses rows {from}..{to}"),
            ));
        }
        Ok((from - first..to - first, from, total))
    }

    /// One device's worker: takes tiles until none is left, three stages overlapping — while the device runs
    /// tile k, a thread reads the next tile it took and another writes tile k − 1's outputs. `built` is a chain
    /// already built on this device (the probe's), if any.
    fn work(
        &self,
        app: &ClApp,
        mut built: Option<(usize, bool, bool, Built)>,
        events: &std::sync::mpsc::Sender<Event>,
    ) -> Result<()> {
        let device = format!("{} {}", app.device().id(), app.device().name);
        let (axis, extent) = (self.axis, self.extent);
        // The outputs' host arrays of the last tile, read into again (no allocation, no page faults).
        let mut buffers: HashMap<String, HostArray> = HashMap::new();
        std::thread::scope(|scope| -> Result<()> {
            type Read = Result<(Image, f64)>;
            let read = move |rows: Range<usize>| -> Read {
                let clock = Instant::now();
                self.source.image(axis, rows).map(|image| (image, clock.elapsed().as_secs_f64()))
            };
            let start_reading = |rows: Range<usize>| {
                let with_halo = self.with_halo(&rows);
                (rows, scope.spawn(move || read(with_halo)))
            };
            type Written = (Result<f64>, Vec<(String, HostArray)>);
            let mut writing: Option<(TileTiming, std::thread::ScopedJoinHandle<'_, Written>)> = None;
            let finish_writing = |writing: &mut Option<(TileTiming, std::thread::ScopedJoinHandle<'_, Written>)>,
                                  buffers: &mut HashMap<String, HostArray>|
             -> Result<()> {
                if let Some((mut timing, handle)) = writing.take() {
                    let (result, arrays) =
                        handle.join().map_err(|_| Error::invalid("tiles", "the thread writing the outputs failed"))?;
                    buffers.extend(arrays);
                    timing.write_s = result?;
                    // The run's thread has stopped listening only when it is failing already.
                    let _ = events.send(Event::Tile(timing));
                }
                Ok(())
            };
            let mut current = self.claim().map(start_reading);
            // The wait for the tile before's writer, counted with the next tile's.
            let mut waited = 0.0;
            while let Some((rows, reading)) = current.take() {
                let clock = Instant::now();
                let (image, read_s) =
                    reading.join().map_err(|_| Error::invalid("tiles", "the thread reading the input failed"))??;
                let wait_s = std::mem::take(&mut waited) + clock.elapsed().as_secs_f64();
                current = self.claim().map(start_reading);
                let Range { start: lo, end: hi } = self.with_halo(&rows);
                let mut timing =
                    TileTiming { rows: rows.clone(), device: device.clone(), read_s, wait_s, ..TileTiming::default() };
                let clock = Instant::now();
                let key = (hi - lo, lo == 0, hi == extent);
                let ran = self.chain.tile_chain(app, self.spec, &image, key, self.double, &mut built).and_then(|b| {
                    app.finish()?;
                    timing.upload_s = clock.elapsed().as_secs_f64();
                    let clock = Instant::now();
                    b.pipeline.run()?;
                    app.finish()?;
                    timing.compute_s = clock.elapsed().as_secs_f64();
                    Ok(())
                });
                drop(image);
                match ran {
                    Err(Error::OutOfMemory { .. }) if rows.len() > 1 => {
                        // The estimate was short (a process's scratch): this tile runs again as two halves.
                        built = None;
                        let middle = rows.start + rows.len() / 2;
                        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                        queue.push_front(middle..rows.end);
                        queue.push_front(rows.start..middle);
                        let _ = events.send(Event::Shrunk(middle - rows.start));
                        continue;
                    }
                    other => other?,
                }
                let Some((_, _, _, b)) = built.as_ref() else {
                    return Err(Error::invalid("tiles", "no chain was built"));
                };
                let values = self.reduce_tile(b, lo, &rows)?;
                self.partials.lock().unwrap_or_else(|p| p.into_inner()).push((rows.start, values));
                let clock = Instant::now();
                let parts = self.download(b, lo, &rows, &mut buffers)?;
                timing.download_s = clock.elapsed().as_secs_f64();
                let clock = Instant::now();
                finish_writing(&mut writing, &mut buffers)?;
                waited = clock.elapsed().as_secs_f64();
                writing = Some((timing, scope.spawn(move || self.write_parts(parts))));
            }
            finish_writing(&mut writing, &mut buffers)
        })
    }

    /// The reductions' partial values over the rows `rows` this tile computes exactly (its first row is `lo`).
    fn reduce_tile(&self, b: &Built, lo: usize, rows: &Range<usize>) -> Result<Vec<(Complex64, ElementKind)>> {
        let mut values = Vec::with_capacity(self.reductions.len());
        for step in self.reductions {
            let mut parts = Vec::with_capacity(step.inputs.len());
            for name in &step.inputs {
                let array = defined(&b.arrays, name)?;
                let local_extent = array.shape().get(self.axis).copied().unwrap_or(0);
                let (local, _, _) = self.interior(name, local_extent, lo, rows)?;
                parts.push(array.slab(self.axis, local)?);
            }
            let operands: Vec<&AnyData> = parts.iter().collect();
            let (mut process, out) = step.op.plan(&operands)?;
            process.init()?;
            process.launch()?;
            values.push((out.values()?.first().copied().unwrap_or_default(), out.kind()));
        }
        Ok(values)
    }

    /// The outputs of a tile back on the host (into the last tile's `buffers`), each with the rows it computed
    /// exactly; the first tile to finish records what each output inherits.
    fn download(
        &self,
        b: &Built,
        lo: usize,
        rows: &Range<usize>,
        buffers: &mut HashMap<String, HostArray>,
    ) -> Result<Parts> {
        let mut parts: Parts = Vec::with_capacity(self.chain.outputs.len());
        for (name, _, _) in &self.chain.outputs {
            let host = defined(&b.arrays, name)?.to_host_reusing(buffers.remove(name))?;
            let (local, from, total) =
                self.interior(name, host.shape().get(self.axis).copied().unwrap_or(0), lo, rows)?;
            parts.push((name.clone(), host, local, from, total));
            self.origins
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .entry(name.clone())
                .or_insert_with(|| b.origins.get(name).copied().unwrap_or_default());
        }
        Ok(parts)
    }

    /// Writes a tile's outputs into their sinks (on the writer thread): the seconds it took, and the host arrays
    /// back for the next tile.
    fn write_parts(&self, parts: Parts) -> (Result<f64>, Vec<(String, HostArray)>) {
        let clock = Instant::now();
        let mut arrays = Vec::with_capacity(parts.len());
        let mut result = Ok(());
        for (name, host, local, from, total) in parts {
            if result.is_ok()
                && let Some(sink) = self.sinks.get(&name)
            {
                let natural =
                    self.origins.lock().unwrap_or_else(|p| p.into_inner()).get(&name).and_then(|o| o.result_dtype);
                result = sink.put(self.axis, from, &host, local, total, natural);
            }
            arrays.push((name, host));
        }
        (result.map(|()| clock.elapsed().as_secs_f64()), arrays)
    }
}

impl Sink {
    /// Takes indices `local` along `axis` of a tile's output `tile`, an output whose extent there is `total`,
    /// at index `at`; a streamed file is made in the output's `natural` type ([`Op::result_dtype`]: labels,
    /// masks) when no type or conversion was asked for, as an untiled run writes it.
    fn put(
        &self,
        axis: usize,
        at: usize,
        tile: &HostArray,
        local: Range<usize>,
        total: usize,
        natural: Option<Dtype>,
    ) -> Result<()> {
        let mut full = tile.shape().to_vec();
        if let Some(n) = full.get_mut(axis) {
            *n = total;
        }
        let slab = || {
            tile.slab(axis, local.clone()).ok_or_else(|| {
                Error::invalid("tiles", format!("rows {local:?} are outside a tile of shape {:?}", tile.shape()))
            })
        };
        match self {
            Sink::Stream { path, writer, dtype, scale, clip } => {
                let own = tile.dtype();
                let as_computed = *scale == Scale::Raw && !*clip;
                let target = dtype.or(natural.filter(|_| as_computed)).unwrap_or(own);
                let file = {
                    let mut made = writer.lock().unwrap_or_else(|p| p.into_inner());
                    if made.is_none() {
                        let writer = SlabWriter::npy(path, target, &full)?;
                        *made = Some(Arc::new(StreamFile { writer, shape: full.clone(), dtype: target }));
                    }
                    made.clone().ok_or_else(|| Error::invalid("tiles", format!("no writer for {}", path.display())))?
                };
                let w = &file.writer;
                if file.dtype == own && *scale == Scale::Raw && !*clip {
                    if axis == 0 { w.write_rows(at, tile, local) } else { w.write(axis, at, &slab()?) }
                } else {
                    w.write(axis, at, &converted(tile, axis, local, file.dtype, *scale, *clip, path)?)
                }
            }
            Sink::Gather { array } => {
                let rows = slab()?;
                let mut array = array.lock().unwrap_or_else(|p| p.into_inner());
                let whole = array.get_or_insert_with(|| HostArray::zeros(rows.dtype(), &full));
                if whole.set_slab(axis, at, &rows) {
                    Ok(())
                } else {
                    Err(Error::invalid(
                        "tiles",
                        format!("rows of shape {:?} do not fit an output of shape {:?} at {at}", rows.shape(), full),
                    ))
                }
            }
        }
    }

    /// Completes the file: renames a streamed one into place, saves a gathered one. Gives its shape and type.
    fn finish(self, path: &Path, origin: Origin, options: &OutputOptions) -> Result<(Vec<usize>, Dtype)> {
        let nothing = || Error::invalid("tiles", format!("nothing was computed for {}", path.display()));
        match self {
            Sink::Stream { writer, .. } => {
                let file = writer.into_inner().unwrap_or_else(|p| p.into_inner()).ok_or_else(nothing)?;
                // Every tile worker has ended: this is the last reference.
                let file = Arc::try_unwrap(file)
                    .map_err(|_| Error::invalid("tiles", format!("{} is still being written", path.display())))?;
                file.writer.finish()?;
                Ok((file.shape, file.dtype))
            }
            Sink::Gather { array } => {
                let array = array.into_inner().unwrap_or_else(|p| p.into_inner()).ok_or_else(nothing)?;
                let shape = array.shape().to_vec();
                let dtype = save_converted(path, array, origin, options)?;
                Ok((shape, dtype))
            }
        }
    }
}

/// Indices `local` along `axis` of a tile's output converted to `dtype` for its file. Values that convert exactly
/// (a mask to uint8, labels to int32, rounding when asked) take the fast conversion on every core, straight from
/// the tile's rows along the first axis; any other case takes [`HostArray::cast`], which names the first value
/// that does not fit, after its host memory (several times the rows') is checked against the budget.
fn converted(
    tile: &HostArray,
    axis: usize,
    local: Range<usize>,
    dtype: Dtype,
    scale: Scale,
    clip: bool,
    path: &Path,
) -> Result<HostArray> {
    let outside = || Error::invalid("tiles", format!("rows {local:?} are outside a tile of shape {:?}", tile.shape()));
    let exact = !clip && scale != Scale::MinMax;
    let round = scale == Scale::Round;
    if exact
        && axis == 0
        && let Some(rows) = crate::io::cast_exact_rows(tile, local.clone(), dtype, round)
    {
        return Ok(rows);
    }
    let rows = tile.slab(axis, local.clone()).ok_or_else(outside)?;
    if exact && let Some(rows) = crate::io::cast_exact(&rows, dtype, round) {
        return Ok(rows);
    }
    let what =
        format!("converting rows {local:?} of a {:?} {} tile to {}", tile.shape(), tile.dtype().name(), dtype.name());
    crate::HostBudget::current()?.check(path, &what, rows.cast_bytes(dtype))?;
    rows.cast(dtype, scale, clip)
}

/// Whether an output is written slab by slab (an NPY file whose values convert row by row) rather than gathered in
/// host memory and saved once.
fn streams(path: &Path, options: &OutputOptions) -> bool {
    let npy = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    npy && options.scale.unwrap_or(Scale::Raw) != Scale::MinMax
}

/// The rule for tile heights: a tile computes at least as many rows as its context on each side, so that the
/// context it reads again (its neighbours' rows) is at most two thirds of what it reads and the work at most
/// three times an untiled run's — never many tiles of a few rows under a wide halo (2 rows under 17 of context
/// on each side were 18 times the work).
#[derive(Clone, Copy, Debug)]
struct TileSizes {
    extent: usize,
    halo: usize,
}

impl TileSizes {
    /// Rows a tile computes at least: the halo, and one when there is none.
    fn least_computed(self) -> usize {
        self.halo.max(1)
    }

    /// Rows the smallest tile reads (the whole extent when it is shorter).
    fn smallest(self) -> usize {
        (self.least_computed() + 2 * self.halo).min(self.extent)
    }

    /// Rows each tile computes when `fit` rows (context included) fit in memory: as many as fit, spread evenly
    /// over the tiles that takes, so the last tile is not a sliver.
    fn rows(self, fit: usize) -> usize {
        let most = fit.saturating_sub(2 * self.halo).max(self.least_computed()).min(self.extent).max(1);
        self.extent.div_ceil(self.extent.div_ceil(most).max(1)).max(1)
    }

    /// The smallest tile, for messages.
    fn describe(self, shape: &[usize], axis: usize) -> String {
        format!(
            "the smallest tile, {} rows along axis {axis} of {shape:?} ({} rows of context on each side and at least {} \
             computed, so that re-read context stays at most two thirds of what a tile reads),",
            self.smallest(),
            self.halo,
            self.least_computed()
        )
    }
}

/// Device bytes free under the app's memory limit now.
fn free_bytes(app: &ClApp) -> u64 {
    app.memory_limit().saturating_sub(app.memory_stats().live_bytes)
}

/// A reduction's partials over the tiles, combined as the device reduction combines its work-groups': sums of
/// p-th powers for p-norms, maxima for the ∞-norm, sums for dot products.
#[derive(Clone, Copy, Debug)]
struct Partial {
    acc: Complex64,
    kind: ElementKind,
}

impl Default for Partial {
    fn default() -> Partial {
        Partial { acc: Complex64::default(), kind: ElementKind::F32 }
    }
}

impl Partial {
    fn add(&mut self, op: &Op, value: Complex64, kind: ElementKind) {
        self.kind = kind;
        match op {
            Op::Norm(NormArgs { p, .. }) if p.0.is_infinite() => self.acc.re = self.acc.re.max(value.re),
            Op::Norm(NormArgs { p, .. }) => self.acc.re += value.re.powf(p.0),
            _ => self.acc += value,
        }
    }

    fn result(&self, op: &Op) -> Result<Complex64> {
        match op {
            Op::Norm(NormArgs { p, .. }) if p.0.is_infinite() => Ok(self.acc),
            Op::Norm(NormArgs { p, .. }) if p.0 > 0.0 => Ok(Complex64::new(self.acc.re.powf(1.0 / p.0), 0.0)),
            Op::Norm(NormArgs { p, .. }) => {
                Err(Error::invalid("tiles", format!("a {}-norm cannot combine over tiles", p.0)))
            }
            _ => Ok(self.acc),
        }
    }
}

/// An output written: its name, path, shape and the type the file holds.
type WrittenOutput = (String, PathBuf, Vec<usize>, &'static str);

/// The first device's probe: a tile of `rows` rows from the top of `source`, built to measure a row's cost.
#[derive(Clone, Copy)]
struct Probe<'a> {
    app: &'a ClApp,
    spec: &'a FileSpec,
    source: &'a TileInput,
    axis: usize,
    rows: usize,
    halo: usize,
    double: bool,
}

/// One worker per device takes tiles from the shared queue (the first reusing the chain the probe built); their
/// timings and shrinks reach `progress` here, on the calling thread. The timings, in tile order, or the first error.
fn run_workers(
    apps: &[ClApp],
    shared: &Shared<'_>,
    probe_chain: Option<(usize, bool, bool, Built)>,
    plan: &mut TilePlan,
    progress: &mut impl FnMut(TileProgress<'_>),
) -> Result<Vec<TileTiming>> {
    let mut timings: Vec<TileTiming> = Vec::new();
    let mut first_error = None;
    std::thread::scope(|scope| {
        let (events, received) = std::sync::mpsc::channel::<Event>();
        let mut workers = Vec::with_capacity(apps.len());
        let mut probe_chain = probe_chain;
        for app in apps {
            let (events, built) = (events.clone(), probe_chain.take());
            workers.push(scope.spawn(move || {
                let result = shared.work(app, built, &events);
                if result.is_err() {
                    shared.failed.store(true, Ordering::Relaxed);
                }
                result
            }));
        }
        drop(events);
        for event in received {
            match event {
                Event::Tile(timing) => {
                    progress(TileProgress::Tile(&timing));
                    timings.push(timing);
                }
                Event::Shrunk(rows) => {
                    plan.rows = plan.rows.min(rows);
                    progress(TileProgress::Shrunk(rows));
                }
            }
        }
        for worker in workers {
            let result = worker.join().unwrap_or_else(|_| Err(Error::invalid("tiles", "a tile worker failed")));
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
    });
    if let Some(e) = first_error {
        return Err(e);
    }
    timings.sort_by_key(|t| t.rows.start);
    Ok(timings)
}

/// The reductions' values: per-tile partials combined in tile order, whichever device ran each tile.
fn combine(
    reductions: &[Step],
    mut per_tile: Vec<(usize, Vec<(Complex64, ElementKind)>)>,
) -> Result<Vec<(String, Complex64, ElementKind)>> {
    per_tile.sort_by_key(|(start, _)| *start);
    let mut values = Vec::with_capacity(reductions.len());
    for (k, step) in reductions.iter().enumerate() {
        let mut partial = Partial::default();
        for (_, tile) in &per_tile {
            if let Some(&(value, kind)) = tile.get(k) {
                partial.add(&step.op, value, kind);
            }
        }
        values.push((step.output.clone(), partial.result(&step.op)?, partial.kind));
    }
    Ok(values)
}
