//! [`Label`] (scipy.ndimage.label) and [`FillHoles`] (binary_fill_holes): connected components by a concurrent
//! union-find on the device (`kernels/morphology.cl`, label_*), numbered in raster order of each component's first
//! element as scipy numbers them; hole filling as the background components that do not reach outside the array.
//! On CPU devices both run on the host's threads in the mapped buffers instead (`host_label.rs`).

use super::host_label::HostLabel;
use crate::app::Kernel;
use crate::data::{HostRegions, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{EXTENTS, X_STRIDES, Y_STRIDES, array_view, index_type_for, indices};
use crate::process::rank::Footprint;
use crate::process::{Prepared, Process};

/// Work-items per group; chunk of elements one work-item numbers; work-items of the per-item scan.
const GROUP: usize = 256;
const CHUNK: usize = 512;
const SCAN_GROUP: usize = 256;

/// The settings of a [`Label`] or [`FillHoles`]: the structure — scipy's generate_binary_structure(rank,
/// `connectivity`) (default 1: the cross, faces only), or an explicit 3-wide, centro-symmetric [`Footprint`] —
/// over the last `rank` axes (default every axis up to three; leading axes are a batch, each item on its own).
///
/// ```
/// use cliper::LabelParams;
/// let p = LabelParams::default().connectivity(2);
/// assert_eq!((p.connectivity, p.rank), (2, None));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LabelParams {
    /// The structure (overrides `connectivity`).
    pub structure: Option<Footprint>,
    /// generate_binary_structure's connectivity when no structure is given: 1 to rank.
    pub connectivity: usize,
    /// The axes spanned, the last ones.
    pub rank: Option<usize>,
    /// Keep the kernels on CPU devices, where labelling otherwise runs on the host's threads
    /// ([`LabelStrategy::on_host`]); for tests and benchmarks of the kernels.
    pub kernels_only: bool,
}

impl Default for LabelParams {
    fn default() -> LabelParams {
        LabelParams { structure: None, connectivity: 1, rank: None, kernels_only: false }
    }
}

impl LabelParams {
    /// Sets the connectivity of the default structure.
    pub fn connectivity(mut self, connectivity: usize) -> LabelParams {
        self.connectivity = connectivity;
        self
    }
    /// Sets the structure.
    pub fn structure(mut self, structure: Footprint) -> LabelParams {
        self.structure = Some(structure);
        self
    }
    /// Sets the axes spanned.
    pub fn rank(mut self, rank: usize) -> LabelParams {
        self.rank = Some(rank);
        self
    }
    /// Keeps the kernels on CPU devices.
    ///
    /// ```
    /// use cliper::{ClApp, DeviceKind, Label, LabelParams, Process, XData};
    /// let app = ClApp::new()?;
    /// let (x, y) = (XData::<f32>::zeros(&app, &[6, 7])?, XData::<f32>::zeros(&app, &[6, 7])?);
    /// let mut kernels = Label::new(&x, &y, LabelParams::default().kernels_only(true));
    /// let mut planned = Label::new(&x, &y, LabelParams::default());
    /// kernels.init()?;
    /// planned.init()?;
    /// assert!(!kernels.strategy().unwrap().on_host);
    /// assert_eq!(planned.strategy().unwrap().on_host, app.device().kind == DeviceKind::Cpu);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn kernels_only(mut self, on: bool) -> LabelParams {
        self.kernels_only = on;
        self
    }

    /// The axes spanned and the structure's neighbour offsets (z, y, x, 0; the centre left out), checked as scipy
    /// checks them.
    fn resolve(&self, op: &str, ndim: usize) -> Result<(usize, Vec<[i32; 4]>)> {
        let rank = self.rank.unwrap_or(match &self.structure {
            Some(s) => s.shape().len(),
            None => ndim.clamp(1, 3),
        });
        if !(1..=3).contains(&rank) || rank > ndim {
            return Err(Error::invalid(op, format!("spans 1 to 3 of the input's {ndim} axes; asked for {rank}")));
        }
        let structure = match &self.structure {
            Some(s) => s.clone(),
            None => Footprint::binary_structure(rank, self.connectivity).map_err(|_| {
                Error::invalid(
                    op,
                    format!("connectivity {} is not within 1 to {rank} (the axes spanned)", self.connectivity),
                )
            })?,
        };
        if structure.shape().len() != rank || structure.shape().iter().any(|&s| s != 3) {
            return Err(Error::shape_because(
                op,
                &vec![3; rank],
                structure.shape(),
                "a structure of 3 per axis spanned",
            ));
        }
        let mask = structure.mask();
        if mask.iter().zip(mask.iter().rev()).any(|(a, b)| a != b) {
            return Err(Error::invalid(op, "the structure must be centro-symmetric (scipy's rule)"));
        }
        let mut offsets = Vec::new();
        for (i, _) in mask.iter().enumerate().filter(|(_, m)| **m) {
            let mut d = [0i32; 4];
            let mut rest = i;
            for k in (0..rank).rev() {
                if let Some(slot) = d.get_mut(3 - rank + k) {
                    *slot = (rest % 3) as i32 - 1;
                }
                rest /= 3;
            }
            if d != [0; 4] {
                offsets.push(d);
            }
        }
        Ok((rank, offsets))
    }
}

/// What a [`Label`] or [`FillHoles`] runs.
///
/// ```
/// use cliper::{ClApp, Label, LabelParams, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[6, 7])?;
/// let mut p = Label::new(&x, &XData::zeros(&app, &[6, 7])?, LabelParams::default());
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().neighbours, 4);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelStrategy {
    /// The structure's neighbours of an element.
    pub neighbours: usize,
    /// Batch items labelled independently.
    pub items: usize,
    /// On the host's threads in the mapped buffers of a CPU device (raster-order union-find, strips of rows at
    /// once), not the kernels' concurrent union-find.
    pub on_host: bool,
}

impl std::fmt::Display for LabelStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how =
            if self.on_host { "on the host's threads, in raster order" } else { "atomic minimum of roots, one pass" };
        write!(
            f,
            "union-find over {} neighbours ({how}), {} item(s) numbered in raster order",
            self.neighbours, self.items
        )
    }
}

/// The union-find shared by [`Label`] and [`FillHoles`].
struct Plan<T: RealElement> {
    engine: Engine,
    noffsets: i32,
    view_x: ([usize; 4], [usize; 4]),
    view_y: ([usize; 4], [usize; 4]),
    holes: bool,
    input: XData<T>,
    output: XData<T>,
}

/// Where the union-find runs.
enum Engine {
    Kernels(Box<Kernels>),
    /// On the host, with the regions it maps and the feature counts of the last launch.
    Host {
        pass: HostLabel,
        regions: HostRegions,
        features: Vec<usize>,
    },
}

/// The kernels' programs and work buffers.
struct Kernels {
    kernels: [Kernel; 7],
    parent: XData<f32>,
    number: XData<f32>,
    counts: XData<f32>,
    totals: XData<f32>,
    offsets: XData<f32>,
    index: IndexType,
    chunks: usize,
}

impl<T: RealElement> Plan<T> {
    fn strategy(&self) -> LabelStrategy {
        LabelStrategy {
            neighbours: self.noffsets as usize,
            items: self.view_x.0.first().copied().unwrap_or(1),
            on_host: matches!(self.engine, Engine::Host { .. }),
        }
    }

    /// The feature count of each item from the last launch.
    fn features(&self) -> Result<Vec<usize>> {
        match &self.engine {
            Engine::Kernels(k) => Ok(k.totals.to_vec()?.iter().map(|v| v.to_bits() as usize).collect()),
            Engine::Host { features, .. } => Ok(features.clone()),
        }
    }

    fn new(op: &str, input: &XData<T>, output: &XData<T>, params: &LabelParams, holes: bool) -> Result<Plan<T>> {
        let shape = input.shape().to_vec();
        if output.shape() != shape.as_slice() {
            return Err(Error::shape(op, &shape, output.shape()));
        }
        let (rank, offsets) = params.resolve(op, shape.len())?;
        let count: usize = shape.iter().product();
        if count as u64 + 2 >= u64::from(u32::MAX) {
            return Err(Error::Unsupported {
                what: format!("{op} of {count} elements (shape {shape:?}): at most 2^32 − 3 per call"),
            });
        }
        let view_x = array_view(op, input, rank)?;
        let view_y = array_view(op, output, rank)?;
        let per_item: usize = view_x.0.iter().skip(1).product();
        let items = view_x.0.first().copied().unwrap_or(1);
        // Labels are numbers up to an item's element count: float32 holds them exactly up to 2^24.
        if !holes && std::mem::size_of::<T>() == 4 && per_item > 1 << 24 {
            return Err(Error::Unsupported {
                what: format!(
                    "{op} into float32 of items of {per_item} elements (shape {shape:?}): labels above 2^24 would \
                     round; label float64 data"
                ),
            });
        }
        let plan = |engine| Plan {
            engine,
            noffsets: offsets.len() as i32,
            view_x,
            view_y,
            holes,
            input: input.clone(),
            output: output.clone(),
        };
        if let Some(regions) = HostRegions::for_pass(input, output).filter(|_| !params.kernels_only) {
            let (e, s) = view_x;
            let pass = HostLabel {
                n: [e[1], e[2], e[3]],
                strides: s,
                start: regions.input_start(input),
                items,
                offsets: offsets.clone(),
                holes,
            };
            return Ok(plan(Engine::Host { pass, regions, features: vec![0; items] }));
        }
        let app = input.app().clone();
        // uint buffers travel in float arrays (4 bytes an element).
        let words = |n: usize| XData::<f32>::uninit(&app, op, &[n.max(1)]);
        let chunks = per_item.div_ceil(CHUNK).max(1);
        let parent = words(count + 1)?;
        let number = words(if holes { 1 } else { count })?;
        let counts = words(items * chunks)?;
        let totals = words(items)?;
        let bits: Vec<f32> = offsets.iter().flat_map(|d| d.map(|v| f32::from_bits(v as u32))).collect();
        let offsets_data =
            XData::from_slice(&app, &[bits.len().max(4)], &if bits.is_empty() { vec![0.0; 4] } else { bits })?;
        let index = index_type_for(&[input.layout(), output.layout()], &[count as u64 + 1]);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("morphology.cl", &kernels::with_common(kernels::MORPHOLOGY), &options)?;
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by(op));
        let kernels = [
            k("label_init")?,
            k("label_merge")?,
            k("label_compress")?,
            k("label_count")?,
            k("label_scan")?,
            k("label_number")?,
            k("label_write")?,
        ];
        let kernels = Kernels { kernels, parent, number, counts, totals, offsets: offsets_data, index, chunks };
        Ok(plan(Engine::Kernels(Box::new(kernels))))
    }

    fn launch(&mut self) -> Result<()> {
        let ((e, sx), (_, sy)) = (self.view_x, self.view_y);
        let count: usize = e.iter().product();
        if count == 0 {
            return Ok(());
        }
        let (input, output) = (&self.input, &self.output);
        let op = if self.holes { "binary_fill_holes" } else { "label" };
        let k = match &mut self.engine {
            Engine::Kernels(k) => k,
            Engine::Host { pass, regions, features } => {
                let bytes = 2 * output.len() as u64 * std::mem::size_of::<T>() as u64;
                *features = regions.run(op, "host_label", input, output, (bytes, 0), true, |x, y| pass.run(x, y))?;
                return Ok(());
            }
        };
        let idx = k.index;
        let per_item: usize = e.iter().skip(1).product();
        let items = e.first().copied().unwrap_or(1);
        let holes = i32::from(self.holes);
        let (offset_x, offset_y) = (input.offset() as u64, output.offset() as u64);
        let global = [count.div_ceil(GROUP) * GROUP];
        let [init, merge, compress, count_k, scan, number, write] = &mut k.kernels;
        let l = indices(init.launch().input("x", input).index("x0", idx, offset_x), idx, X_STRIDES, &sx);
        indices(l, idx, EXTENTS, &e)
            .output("parent", &k.parent)
            .scalar("holes", holes)
            .global(&global)
            .local(&[GROUP])
            .enqueue()?;
        let l = indices(merge.launch().input("x", input).index("x0", idx, offset_x), idx, X_STRIDES, &sx);
        indices(l, idx, EXTENTS, &e)
            .in_out("parent", &k.parent)
            .scalar("holes", holes)
            .input("offsets", &k.offsets)
            .scalar("noffsets", self.noffsets)
            .global(&global)
            .local(&[GROUP])
            .enqueue()?;
        compress
            .launch()
            .index("count", idx, count as u64)
            .in_out("parent", &k.parent)
            .scalar("holes", holes)
            .global(&global)
            .local(&[GROUP])
            .enqueue()?;
        if !self.holes {
            let chunk_items = items * k.chunks;
            let chunk_global = [chunk_items.div_ceil(GROUP) * GROUP];
            count_k
                .launch()
                .index("per_item", idx, per_item as u64)
                .index("nw", idx, items as u64)
                .input("parent", &k.parent)
                .output("counts", &k.counts)
                .index("chunk", idx, CHUNK as u64)
                .index("chunks", idx, k.chunks as u64)
                .global(&chunk_global)
                .local(&[GROUP])
                .enqueue()?;
            scan.launch()
                .in_out("counts", &k.counts)
                .index("chunks", idx, k.chunks as u64)
                .output("totals", &k.totals)
                .local_memory("sums", SCAN_GROUP * 4)
                .global(&[items * SCAN_GROUP])
                .local(&[SCAN_GROUP])
                .enqueue()?;
            number
                .launch()
                .index("per_item", idx, per_item as u64)
                .index("nw", idx, items as u64)
                .input("parent", &k.parent)
                .input("counts", &k.counts)
                .index("chunk", idx, CHUNK as u64)
                .index("chunks", idx, k.chunks as u64)
                .output("number", &k.number)
                .global(&chunk_global)
                .local(&[GROUP])
                .enqueue()?;
        }
        let l = indices(write.launch().input("x", input).index("x0", idx, offset_x), idx, X_STRIDES, &sx);
        let l = indices(l.output("y", output).index("y0", idx, offset_y), idx, Y_STRIDES, &sy);
        indices(l, idx, EXTENTS, &e)
            .input("parent", &k.parent)
            .input("number", &k.number)
            .scalar("holes", holes)
            .global(&global)
            .local(&[GROUP])
            .work((count * 2 * std::mem::size_of::<T>()) as u64, 0)
            .enqueue()
    }
}

/// Connected components of real data (scipy.ndimage.label): non-zero elements joined through the structure get
/// one label, 1 to N per batch item, numbered as scipy numbers them (in raster order of each component's first
/// element); zero stays 0. [`Label::features`] reads N back. float32 outputs hold labels exactly up to 2^24, so
/// items larger than that are refused in float32.
///
/// ```
/// use cliper::{ClApp, Label, LabelParams, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[3, 4], &[1.0f32, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0])?;
/// let y = XData::zeros(&app, &[3, 4])?;
/// let mut label = Label::new(&x, &y, LabelParams::default());
/// label.run()?;
/// assert_eq!(y.to_vec()?, vec![1.0, 1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0, 3.0, 0.0, 2.0, 2.0]);
/// assert_eq!(label.features()?, vec![3]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Label<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: LabelParams,
    plan: Prepared<Plan<T>>,
}

impl<T: RealElement> Label<T> {
    /// `output = label(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: LabelParams) -> Label<T> {
        Label { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: LabelParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "Label", &Self::output_shape(input.shape(), &params)?)?;
        Label::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (after checking the structure).
    ///
    /// ```
    /// use cliper::{Footprint, Label, LabelParams};
    /// assert_eq!(Label::<f32>::output_shape(&[4, 5], &LabelParams::default())?, vec![4, 5]);
    /// let odd = Footprint::new(&[3, 3], vec![true, true, false, false, true, false, false, false, false])?;
    /// assert!(Label::<f32>::output_shape(&[4, 5], &LabelParams::default().structure(odd)).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &LabelParams) -> Result<Vec<usize>> {
        params.resolve("label", input.len())?;
        Ok(input.to_vec())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<LabelStrategy> {
        self.plan.as_ref().map(Plan::strategy)
    }

    /// The number of features of each batch item found by the last launch (waits for it).
    pub fn features(&self) -> Result<Vec<usize>> {
        let plan = self.plan.as_ref().ok_or_else(|| Error::invalid("label", "features before a run"))?;
        plan.features()
    }
}

impl<T: RealElement> Process for Label<T> {
    fn name(&self) -> &str {
        "label"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(Plan::new("label", &self.input, &self.output, &self.params, false)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("label")?.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// scipy.ndimage.binary_fill_holes: 1 where the input is non-zero or where its zero elements cannot reach outside
/// the array through zero elements under the structure; 0 elsewhere. The background is labelled by the same
/// union-find as [`Label`], with the outside as one more element joined to every background element that has a
/// structure neighbour beyond the edge — one pass, where scipy repeats a dilation until nothing changes.
///
/// ```
/// use cliper::{ClApp, FillHoles, LabelParams, XData};
/// let app = ClApp::new()?;
/// // A ring with a hole in the middle; the notch at the right edge is open to the outside.
/// let ring = [1.0f32, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0];
/// let x = XData::from_slice(&app, &[3, 4], &ring)?;
/// let y = FillHoles::apply(&x, LabelParams::default())?.to_vec()?;
/// assert_eq!(y, vec![1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct FillHoles<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: LabelParams,
    plan: Prepared<Plan<T>>,
}

impl<T: RealElement> FillHoles<T> {
    /// `output = binary_fill_holes(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: LabelParams) -> FillHoles<T> {
        FillHoles { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: LabelParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "FillHoles", &Self::output_shape(input.shape(), &params)?)?;
        FillHoles::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (after checking the structure).
    ///
    /// ```
    /// use cliper::{FillHoles, LabelParams};
    /// assert_eq!(FillHoles::<f64>::output_shape(&[4, 5, 6], &LabelParams::default())?, vec![4, 5, 6]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &LabelParams) -> Result<Vec<usize>> {
        params.resolve("binary_fill_holes", input.len())?;
        Ok(input.to_vec())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<LabelStrategy> {
        self.plan.as_ref().map(Plan::strategy)
    }
}

impl<T: RealElement> Process for FillHoles<T> {
    fn name(&self) -> &str {
        "binary_fill_holes"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(Plan::new("binary_fill_holes", &self.input, &self.output, &self.params, true)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("binary_fill_holes")?.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
