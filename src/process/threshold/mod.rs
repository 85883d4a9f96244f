//! Automatic thresholds (the threshold family): [`ThresholdValue`] finds scikit-image's Otsu, Yen, triangle,
//! multi-Otsu and Li thresholds of an image. The histogram is built on the device in one pass over the image after a
//! range pass (kernels: `kernels/threshold.cl`), each work-group counting its block of the image into histograms in
//! local memory ([`HistogramLayout`]); the search over its bins (256 by default) runs on the host (`search.rs`), in
//! a host command that maps the counts — a few kilobytes — and writes the thresholds back. Li's method on a float
//! image uses no histogram: it iterates over the values, a pass per step (`li.rs`).

mod li;
mod search;

pub use li::li_of_histogram;
pub use search::{Histogram, multiotsu, otsu, triangle, yen};

use crate::app::ffi::{self, Region};
use crate::app::{ClApp, DeviceInfo, DeviceKind, Kernel, Program};
use crate::data::{HostCommand, XData};
use crate::element::{Element, RealElement};
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::index_type_for;
use crate::process::{Prepared, Process};
use li::LiPlan;
use num_complex::Complex64;
use std::sync::Arc;

/// Which threshold [`ThresholdValue`] finds (scikit-image's `skimage.filters` functions of the same names).
///
/// ```
/// use cliper::{ClApp, ThresholdMethod, ThresholdParams, ThresholdValue, XData};
/// let app = ClApp::new()?;
/// let m = XData::from_slice(&app, &[6], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// // skimage.filters.threshold_otsu(np.arange(1, 7.0)) is 3.001953125, a centre of its 256 bins
/// assert_eq!(ThresholdValue::apply(&m, ThresholdParams::new(ThresholdMethod::Otsu))?.to_vec()?, vec![3.001953125]);
/// let three = ThresholdMethod::MultiOtsu { classes: 3 };
/// assert_eq!(ThresholdValue::apply(&m, ThresholdParams::new(three))?.len(), three.count());
/// // skimage.filters.threshold_li(np.arange(1, 7, dtype=np.float32)) is 3.1640425 (no bins: Li iterates)
/// let li = ThresholdValue::apply(&m, ThresholdParams::new(ThresholdMethod::Li))?.to_vec()?;
/// assert!((li[0] - 3.1640425).abs() <= 2.0 * f32::EPSILON * 6.0);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdMethod {
    /// `threshold_otsu`: the bin maximising the variance between the two classes.
    Otsu,
    /// `threshold_yen`: Yen's maximum correlation criterion.
    Yen,
    /// `threshold_triangle`: the bin farthest from the line joining the histogram's peak to its far end.
    Triangle,
    /// `threshold_multiotsu`: `classes − 1` thresholds maximising the variance between `classes` classes.
    MultiOtsu {
        /// The number of classes (2 or more).
        classes: usize,
    },
    /// `threshold_li`: Li's iterative minimum cross-entropy, with scikit-image's default tolerance and start (the
    /// mean). A float image is iterated over its values (a pass over the image per step; no bins), an integer
    /// image ([`HistogramBins::Integers`]) over its histogram, as scikit-image does. NaN values are left out,
    /// as scikit-image leaves them, and infinities too.
    Li,
}

impl ThresholdMethod {
    /// How many thresholds it gives.
    pub fn count(&self) -> usize {
        match self {
            ThresholdMethod::MultiOtsu { classes } => classes.saturating_sub(1),
            _ => 1,
        }
    }
}

/// How the values are binned: scikit-image's two rules (`skimage.exposure.histogram`).
///
/// ```
/// use cliper::{ClApp, HistogramBins, ThresholdMethod, ThresholdParams, ThresholdValue, XData};
/// let app = ClApp::new()?;
/// // an 8-bit image's values: one bin per integer, so the threshold is an integer
/// let m = XData::from_slice(&app, &[6], &[10.0f32, 11.0, 12.0, 40.0, 41.0, 42.0])?;
/// let bytes = ThresholdParams::new(ThresholdMethod::Otsu).bins(HistogramBins::Integers(256));
/// // skimage.filters.threshold_otsu(np.array([10, 11, 12, 40, 41, 42], np.uint8)) is 12
/// assert_eq!(ThresholdValue::apply(&m, bytes)?.to_vec()?, vec![12.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistogramBins {
    /// A float image's rule: this many uniform bins over [min, max] (numpy.histogram's).
    Uniform(usize),
    /// An integer image's rule: one bin per integer from min to max. The number is the most bins the image's
    /// integer type can need (256 for 8 bits, 65536 for 16): the device array of counts has that many.
    Integers(usize),
}

/// What [`ThresholdValue`] finds and how it bins.
///
/// ```
/// use cliper::{HistogramBins, ThresholdMethod, ThresholdParams};
/// let yen = ThresholdParams::new(ThresholdMethod::Yen);
/// assert_eq!(yen.bins, HistogramBins::Uniform(256)); // scikit-image's nbins default
/// assert_eq!(yen.bins(HistogramBins::Uniform(64)).bins, HistogramBins::Uniform(64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThresholdParams {
    /// The method.
    pub method: ThresholdMethod,
    /// The binning.
    pub bins: HistogramBins,
    /// Forces how the passes share the image (for tuning and tests: a GPU's layout runs on a CPU too); `None`:
    /// [`HistogramLayout::for_device`].
    pub layout: Option<HistogramLayout>,
}

impl ThresholdParams {
    /// `method` over scikit-image's default 256 uniform bins.
    pub fn new(method: ThresholdMethod) -> ThresholdParams {
        ThresholdParams { method, bins: HistogramBins::Uniform(256), layout: None }
    }

    /// The same method with another binning.
    pub fn bins(mut self, bins: HistogramBins) -> ThresholdParams {
        self.bins = bins;
        self
    }

    /// The same method with the passes' layout forced.
    pub fn layout(mut self, layout: HistogramLayout) -> ThresholdParams {
        self.layout = Some(layout);
        self
    }

    /// Li over a float image's values (no histogram).
    fn iterates(&self) -> bool {
        self.method == ThresholdMethod::Li && matches!(self.bins, HistogramBins::Uniform(_))
    }

    fn capacity(&self) -> usize {
        match self.bins {
            HistogramBins::Uniform(n) | HistogramBins::Integers(n) => n,
        }
    }
}

/// How the range and binning passes share the image among work-groups, each counting into histograms in local
/// memory that it adds to the global counts at the end ([`HistogramLayout::for_device`] chooses;
/// [`ThresholdParams::layout`] forces one, for tuning and tests).
///
/// ```
/// use cliper::{ClApp, HistogramLayout};
/// let app = ClApp::new()?;
/// let layout = HistogramLayout::for_device(app.device(), 4096 * 4096, 256);
/// assert!(layout.groups >= 1 && layout.local_bins <= 256 && layout.copies <= layout.work_items);
/// let gpu_like = HistogramLayout { groups: 8, work_items: 256, copies: 32, local_bins: 256 };
/// assert_eq!(gpu_like.to_string(), "8 work-groups of 256 into 32 local copies");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistogramLayout {
    /// Work-groups of the range and binning passes, each reading one contiguous block of the image.
    pub groups: usize,
    /// Work-items of a group, a power of two (1 on CPUs).
    pub work_items: usize,
    /// Copies of a group's local histogram, taken by work-item `i` as copy `i % copies`, so fewer items collide
    /// on one counter.
    pub copies: usize,
    /// The bins a local histogram holds; higher bins are counted into the global counts directly.
    pub local_bins: usize,
}

impl HistogramLayout {
    /// How `len` values are best counted into `nbins` bins on `device`: GPUs get 8 groups of 256 per compute unit
    /// (enough to hide memory latency) and up to 32 interleaved copies of the histogram in at most 32 KiB of
    /// local memory; CPUs 16 groups of one work-item per core, each with one histogram (PoCL runs a group's items
    /// in turn, so one item reads a contiguous stretch and counts without atomics). Small images get fewer
    /// groups, so that clearing and merging the local histograms stays small beside the counting.
    pub fn for_device(device: &DeviceInfo, len: usize, nbins: usize) -> HistogramLayout {
        let nbins = nbins.max(1);
        let cpu = device.kind == DeviceKind::Cpu;
        let work_items = if cpu { 1 } else { GPU_GROUP.min(power_of_two_at_most(device.max_work_group_size)) };
        let budget = if cpu { CPU_LOCAL_BYTES } else { GPU_LOCAL_BYTES }.min(device.local_mem_bytes as usize / 2);
        let counters = (budget / 4).max(1);
        let copies = power_of_two_at_most((counters / nbins).clamp(1, MAX_COPIES)).min(work_items);
        let local_bins = nbins.min(counters / copies).max(1);
        let per_unit = if cpu { 16 } else { 8 };
        // A group reads at least 16 values per counter it clears and merges, and at least 16 per work-item.
        let least = (16 * local_bins * copies).max(16 * work_items);
        let groups = (device.compute_units as usize * per_unit).min(len.div_ceil(least)).max(1);
        HistogramLayout { groups, work_items, copies, local_bins }
    }

    /// Values a work-item reads at once: groups of one item (CPUs) read 8 as an OpenCL vector, which PoCL turns
    /// into SIMD code; wider groups read one per item (their neighbours read the next ones).
    fn vector_width(&self) -> usize {
        if self.work_items == 1 { CPU_VECTOR } else { 1 }
    }

    /// The elements of one group's block: a multiple of its work-items, so their reads stay aligned.
    fn block(&self, len: usize) -> usize {
        len.div_ceil(self.groups).div_ceil(self.work_items).max(1) * self.work_items
    }

    /// Refuses a layout the kernels cannot run on `device` with `nbins` bins.
    fn check(&self, device: &DeviceInfo, nbins: usize) -> Result<()> {
        let local_bytes = self.local_bins.saturating_mul(self.copies).saturating_mul(4);
        let problem = if self.groups == 0 || self.copies == 0 || self.local_bins == 0 {
            Some("groups, copies and local bins must be at least 1".to_string())
        } else if !self.work_items.is_power_of_two() || self.work_items > device.max_work_group_size {
            Some(format!("work-items must be a power of two up to {}", device.max_work_group_size))
        } else if self.copies > self.work_items || self.local_bins > nbins {
            Some(format!("at most {} copies and {nbins} local bins", self.work_items))
        } else if local_bytes > device.local_mem_bytes as usize {
            Some(format!("{local_bytes} bytes of local memory, the device has {}", device.local_mem_bytes))
        } else {
            None
        };
        match problem {
            Some(p) => Err(Error::invalid("ThresholdValue", format!("histogram layout {self:?}: {p}"))),
            None => Ok(()),
        }
    }
}

impl std::fmt::Display for HistogramLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let copies =
            if self.copies == 1 { "a local histogram".to_string() } else { format!("{} local copies", self.copies) };
        write!(f, "{} work-groups of {} into {copies}", self.groups, self.work_items)
    }
}

fn power_of_two_at_most(n: usize) -> usize {
    if n == 0 { 1 } else { 1 << (usize::BITS - 1 - n.leading_zeros()) }
}

/// What [`ThresholdValue`] planned: the bins it counts and how its passes share the work.
///
/// ```
/// use cliper::{HistogramBins, HistogramLayout, ThresholdMethod, ThresholdStrategy};
/// let layout = HistogramLayout { groups: 1056, work_items: 256, copies: 32, local_bins: 256 };
/// let s = ThresholdStrategy { method: ThresholdMethod::Otsu, bins: HistogramBins::Uniform(256), layout };
/// assert_eq!(
///     s.to_string(),
///     "256 bins (uniform) counted by 1056 work-groups of 256 into 32 local copies; search on the host"
/// );
/// let layout = HistogramLayout { groups: 32, work_items: 1, copies: 1, local_bins: 8192 };
/// let wide = ThresholdStrategy { method: ThresholdMethod::Yen, bins: HistogramBins::Integers(65536), layout };
/// assert!(wide.to_string().ends_with("a local histogram, bins 8192 and up by global atomics; search on the host"));
/// let li = ThresholdStrategy { method: ThresholdMethod::Li, ..s };
/// assert!(li.to_string().starts_with("Li's iteration over the values: each step a pass of 1056 work-groups of 256"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThresholdStrategy {
    /// The method.
    pub method: ThresholdMethod,
    /// The binning.
    pub bins: HistogramBins,
    /// The passes' work-groups and local histograms.
    pub layout: HistogramLayout,
}

impl std::fmt::Display for ThresholdStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (n, rule) = match self.bins {
            HistogramBins::Uniform(n) => (n, "uniform"),
            HistogramBins::Integers(n) => (n, "one per integer"),
        };
        if self.method == ThresholdMethod::Li && rule == "uniform" {
            let layout = self.layout;
            return write!(
                f,
                "Li's iteration over the values: each step a pass of {} work-groups of {}, its arithmetic on the host",
                layout.groups, layout.work_items
            );
        }
        write!(f, "{n} bins ({rule}) counted by {}", self.layout)?;
        if self.layout.local_bins < n {
            write!(f, ", bins {} and up by global atomics", self.layout.local_bins)?;
        }
        write!(f, "; search on the host")
    }
}

/// Work-items of a GPU's histogram work-group.
const GPU_GROUP: usize = 256;
/// Local memory a GPU's group may take for its histograms: 32 KiB leaves room for several groups per unit.
const GPU_LOCAL_BYTES: usize = 32 << 10;
/// A CPU's local memory is its cache: 256 KiB holds the 65536 counters of a 16-bit image.
const CPU_LOCAL_BYTES: usize = 256 << 10;
/// Values a one-item group reads at once.
const CPU_VECTOR: usize = 8;
/// The most copies of a local histogram: one per lane of a 32-wide warp.
const MAX_COPIES: usize = 32;
/// Work-items of the results copy.
const GROUP: usize = 64;
/// The header the range merge writes before the thresholds: min, max, first value, non-finite count.
const HEADER: usize = 4;
/// The most bins a histogram may have (the 65536 of a 16-bit integer image).
const MAX_BINS: usize = 1 << 16;

/// The threshold(s) of a whole real image, as scikit-image's `threshold_otsu`, `threshold_yen`,
/// `threshold_triangle` and `threshold_multiotsu` give them: the output holds [`ThresholdMethod::count`] values
/// (bin centres). An image with a NaN or an infinity is refused when the search runs (scikit-image's histogram
/// refuses a range that is not finite), as is an empty one.
///
/// ```
/// use cliper::{ClApp, ThresholdMethod, ThresholdParams, ThresholdValue, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 4], &[0.0f64, 0.1, 0.2, 0.1, 5.0, 5.2, 5.1, 5.0])?;
/// let t = ThresholdValue::apply(&x, ThresholdParams::new(ThresholdMethod::Otsu))?.to_vec()?;
/// // skimage.filters.threshold_otsu gives 0.19296875000000002 here: the centre of the bin the two classes' variance
/// // peaks at, which lies below the low cluster's 0.2 (the 256 bins are 0.0203 wide)
/// assert!((t[0] - 0.19296875000000002).abs() < 1e-15);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ThresholdValue<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: ThresholdParams,
    plan: Prepared<Plan<T>>,
}

/// What `init` made: the histogram's passes and search, or Li's iteration over the values of a float image.
enum Plan<T: RealElement> {
    Histogram(HistogramPlan<T>),
    Li(LiPlan<T>),
}

impl<T: RealElement> Plan<T> {
    fn layout(&self) -> HistogramLayout {
        match self {
            Plan::Histogram(plan) => plan.layout,
            Plan::Li(plan) => plan.layout(),
        }
    }
}

struct HistogramPlan<T: RealElement> {
    range: Kernel,
    merge: Kernel,
    bins: Kernel,
    results: Kernel,
    partials: XData<T>,
    /// The counts, as uint words in a float array (4 bytes an element).
    counts: XData<f32>,
    header: XData<T>,
    layout: HistogramLayout,
    index: IndexType,
}

impl<T: RealElement> ThresholdValue<T> {
    /// Binds the process to its arrays.
    pub fn new(input: &XData<T>, output: &XData<T>, params: ThresholdParams) -> ThresholdValue<T> {
        ThresholdValue { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// The output's shape: one value per threshold.
    pub fn output_shape(_input: &[usize], params: &ThresholdParams) -> Result<Vec<usize>> {
        check_params(params)?;
        Ok(vec![params.method.count()])
    }

    /// The threshold(s) of `input` in a new array.
    pub fn apply(input: &XData<T>, params: ThresholdParams) -> Result<XData<T>> {
        let output = XData::zeros(input.app(), &Self::output_shape(input.shape(), &params)?)?;
        ThresholdValue::new(input, &output, params).run()?;
        Ok(output)
    }

    /// After `init`, the bins and work-groups it planned.
    pub fn strategy(&self) -> Option<ThresholdStrategy> {
        self.plan.as_ref().map(|plan| ThresholdStrategy {
            method: self.params.method,
            bins: self.params.bins,
            layout: plan.layout(),
        })
    }
}

fn check_params(params: &ThresholdParams) -> Result<()> {
    let n = params.capacity();
    if n == 0 || n > MAX_BINS {
        return Err(Error::invalid("ThresholdValue", format!("nbins must lie in 1..={MAX_BINS}, got {n}")));
    }
    if let ThresholdMethod::MultiOtsu { classes } = params.method
        && classes < 2
    {
        return Err(Error::invalid("ThresholdValue", format!("multiotsu needs 2 classes or more, got {classes}")));
    }
    Ok(())
}

impl<T: RealElement> Process for ThresholdValue<T> {
    fn name(&self) -> &str {
        "ThresholdValue"
    }

    fn init(&mut self) -> Result<()> {
        let expected = Self::output_shape(self.input.shape(), &self.params)?;
        if self.output.shape() != expected.as_slice() {
            return Err(Error::shape("ThresholdValue", &expected, self.output.shape()));
        }
        if !self.input.is_contiguous() || !self.output.is_contiguous() {
            return Err(Error::invalid(
                "ThresholdValue",
                format!(
                    "needs contiguous arrays, got an input of shape {:?} with strides {:?}",
                    self.input.shape(),
                    self.input.strides()
                ),
            ));
        }
        if self.input.is_empty() {
            return Err(Error::invalid(
                "ThresholdValue",
                format!("an empty image (shape {:?}) has no threshold", self.input.shape()),
            ));
        }
        let app = self.input.app().clone();
        let iterates = self.params.iterates();
        // Li's passes keep no histogram: plan them as one of a single bin.
        let nbins = if iterates { 1 } else { self.params.capacity() };
        let layout = match self.params.layout {
            Some(forced) => forced,
            None => HistogramLayout::for_device(app.device(), self.input.len(), nbins),
        };
        layout.check(app.device(), self.params.capacity())?;
        let index = pass_index(&self.input, &self.output, &layout);
        let program = threshold_program::<T>(&app, index, &layout)?;
        if iterates {
            self.plan.set(Plan::Li(LiPlan::new(&app, &program, layout, index)?));
            return Ok(());
        }
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by("ThresholdValue"));
        let header_len = HEADER + self.params.method.count();
        self.plan.set(Plan::Histogram(HistogramPlan {
            range: k("hist_range")?,
            merge: k("hist_range_merge")?,
            bins: k("hist_bins")?,
            results: k("hist_results")?,
            partials: XData::uninit(&app, "ThresholdValue", &[3 * layout.groups])?,
            counts: XData::uninit(&app, "ThresholdValue", &[self.params.capacity()])?,
            header: XData::zeros(&app, &[header_len])?,
            layout,
            index,
        }));
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let done = match self.plan.get("ThresholdValue")? {
            Plan::Histogram(plan) => plan.run(&self.input, &self.output, &self.params),
            Plan::Li(plan) => plan.run(&self.input, &self.output),
        };
        // A refusal found on the way (a NaN for a histogram, an iteration that does not settle) marks the output,
        // so that what reads it next fails with the cause instead of reading a stale value.
        if let Err(refusal) = &done {
            self.output.storage().poison("ThresholdValue", Arc::new(refusal.clone()));
        }
        done
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// The index type of passes over `input` (and `output`) in `layout`'s blocks, whose starts run past the image's
/// end by up to a block (and a vector) in the last groups.
fn pass_index<T: RealElement>(input: &XData<T>, output: &XData<T>, layout: &HistogramLayout) -> IndexType {
    let reach = (layout.groups * layout.block(input.len()) + CPU_VECTOR) as u64;
    index_type_for(&[input.layout(), output.layout()], &[reach])
}

/// threshold.cl built for `T`, the index type and the histogram layout (its sizes are compile-time constants).
fn threshold_program<T: RealElement>(app: &ClApp, index: IndexType, layout: &HistogramLayout) -> Result<Program> {
    // Li's sums accumulate in double where the device has it (LI_FP64), else in float.
    let options = format!(
        "{} -DIDX={} -DHIST_LOCAL={} -DHIST_COPIES={} -DLOCAL_BINS={} -DHIST_VECTOR={} -DLI_FP64={}",
        T::build_options(),
        index.cl_type(),
        layout.work_items,
        layout.copies,
        layout.local_bins,
        layout.vector_width(),
        u8::from(app.device().fp64)
    );
    app.build_program("threshold.cl", &kernels::with_common(kernels::THRESHOLD), &options)
}

impl<T: RealElement> HistogramPlan<T> {
    /// The range pass, its merge, the binning pass, the search on the host and the thresholds into `output`.
    fn run(&mut self, input: &XData<T>, output: &XData<T>, params: &ThresholdParams) -> Result<()> {
        let (idx, n, x_off) = (self.index, input.len() as u64, input.offset() as u64);
        let nbins = params.capacity();
        let layout = self.layout;
        let block = layout.block(input.len()) as u64;
        let global = [layout.groups * layout.work_items];
        let local = [layout.work_items];
        let bytes = (input.len() * std::mem::size_of::<T>()) as u64;
        self.range
            .launch()
            .input("x", input)
            .index("x_off", idx, x_off)
            .index("n", idx, n)
            .index("block", idx, block)
            .output("partials", &self.partials)
            .global(&global)
            .local(&local)
            .work(bytes, 0)
            .enqueue()?;
        self.merge
            .launch()
            .input("partials", &self.partials)
            .scalar("groups", layout.groups as u32)
            .input("x", input)
            .index("x_off", idx, x_off)
            .output("header", &self.header)
            .output("counts", &self.counts)
            .scalar("nbins", nbins as u32)
            .global(&local)
            .local(&local)
            .enqueue()?;
        self.bins
            .launch()
            .input("x", input)
            .index("x_off", idx, x_off)
            .index("n", idx, n)
            .index("block", idx, block)
            .input("header", &self.header)
            .in_out("counts", &self.counts)
            .scalar("nbins", nbins as u32)
            .scalar("integers", i32::from(matches!(params.bins, HistogramBins::Integers(_))))
            .global(&global)
            .local(&local)
            .work(bytes, 0)
            .enqueue()?;
        if let Some(refusal) = search_on_host(self, params, input.len())? {
            self.header.storage().poison("ThresholdValue", Arc::new(refusal.clone()));
            return Err(refusal);
        }
        let count = params.method.count();
        self.results
            .launch()
            .input("header", &self.header)
            .output("y", output)
            .index("y_off", idx, output.offset() as u64)
            .scalar("k", count as u32)
            .global(&[count.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .enqueue()
    }
}

/// Maps the counts and the header, runs the search and writes the thresholds after the header; the refusal of
/// an image the search cannot take (a NaN, too few values for the classes) is returned, not raised, so that the
/// caller marks the outputs with it.
fn search_on_host<T: RealElement>(
    plan: &HistogramPlan<T>,
    params: &ThresholdParams,
    len: usize,
) -> Result<Option<Error>> {
    let reads = [Region { buffer: plan.counts.storage().buffer(), lo: 0, hi: params.capacity() }];
    let write = Region { buffer: plan.header.storage().buffer(), lo: 0, hi: plan.header.len() };
    let mut refusal = None;
    let bytes = (params.capacity() * 4) as u64;
    HostCommand::new::<f32, T>("ThresholdValue", "threshold_search", &[&plan.counts], &[&plan.header])?
        .work(bytes, 0)
        .run(|queue| {
            ffi::with_mapped::<f32, T, ()>(queue, &reads, &write, |counts, header| {
                let words: Vec<u64> =
                    counts.first().map(|c| c.iter().map(|w| u64::from(w.to_bits())).collect()).unwrap_or_default();
                match thresholds(&words, header, params, len, T::IS_DOUBLE) {
                    Ok(values) => {
                        for (slot, v) in header.iter_mut().skip(HEADER).zip(values) {
                            *slot = T::from_c64(Complex64::new(v, 0.0));
                        }
                    }
                    Err(e) => refusal = Some(e),
                }
            })
            .map(|((), event)| event)
        })?;
    Ok(refusal)
}

/// The thresholds from the device's counts and header, in float64 (every value is a centre of the image's type).
fn thresholds<T: Element>(
    counts: &[u64],
    header: &[T],
    params: &ThresholdParams,
    len: usize,
    double: bool,
) -> Result<Vec<f64>> {
    let value = |k: usize| header.get(k).map_or(f64::NAN, |v| v.to_c64().re);
    let (min, max, first, nonfinite) = (value(0), value(1), value(2), value(3));
    if nonfinite > 0.0 || !min.is_finite() || !max.is_finite() {
        return Err(Error::invalid(
            "threshold-value",
            format!("the image holds {nonfinite} NaN or infinite values: its range is not finite, so no histogram"),
        ));
    }
    let counted: u64 = counts.iter().sum();
    if counted != len as u64 {
        return Err(Error::invalid(
            "threshold-value",
            format!("{} of {len} values are not integers of the image's integer type", len as u64 - counted),
        ));
    }
    // Otsu's and Li's own rule: an image of one value is its own threshold.
    if matches!(params.method, ThresholdMethod::Otsu | ThresholdMethod::Li) && min == max {
        return Ok(vec![first]);
    }
    // Li reaches the histogram's search only for integer images (a float image's values are iterated over):
    // scikit-image's integer path, over `image - image_min`, whose bin k is this histogram's.
    if params.method == ThresholdMethod::Li {
        let bins = ((max - min) as usize + 1).min(counts.len());
        return Ok(vec![li_of_histogram(counts.get(..bins).unwrap_or(counts))? + min]);
    }
    match params.bins {
        HistogramBins::Integers(_) => {
            let bins = (max - min) as usize + 1;
            let centres = (0..bins).map(|k| min + k as f64).collect();
            search(&Histogram { counts: counts.iter().take(bins).copied().collect(), centres }, params.method, first)
        }
        HistogramBins::Uniform(n) if double => search(&uniform(counts, min, max, n), params.method, first),
        HistogramBins::Uniform(n) => {
            let values = search(&uniform(counts, min as f32, max as f32, n), params.method, first as f32)?;
            Ok(values.into_iter().map(f64::from).collect())
        }
    }
}

/// The histogram with numpy.histogram's bin centres, computed in the image's type `C` as numpy computes them.
fn uniform<C: num_traits::Float>(counts: &[u64], min: C, max: C, n: usize) -> Histogram<C> {
    let half = C::from(0.5).unwrap_or_else(C::zero);
    let (first, last) = if min == max { (min - half, max + half) } else { (min, max) };
    let step = (last - first) / C::from(n).unwrap_or_else(C::one);
    let edge = |k: usize| if k == n { last } else { C::from(k).unwrap_or_else(C::zero) * step + first };
    let two = C::from(2.0).unwrap_or_else(C::one);
    Histogram {
        counts: counts.iter().take(n).copied().collect(),
        centres: (0..n).map(|k| (edge(k) + edge(k + 1)) / two).collect(),
    }
}

fn search<C: num_traits::Float + From<f32>>(
    histogram: &Histogram<C>,
    method: ThresholdMethod,
    first: C,
) -> Result<Vec<C>> {
    match method {
        ThresholdMethod::Otsu => Ok(vec![otsu(histogram)?]),
        ThresholdMethod::Yen => Ok(vec![yen(histogram)?]),
        ThresholdMethod::Triangle => Ok(vec![triangle(histogram, first)?]),
        ThresholdMethod::MultiOtsu { classes } => multiotsu(histogram, classes),
        ThresholdMethod::Li => {
            Err(Error::invalid("threshold-value", "Li's threshold of a float image iterates over its values, not bins"))
        }
    }
}

/// `above` where a value exceeds its image's automatic threshold ([`ThresholdValue`] with a method that gives
/// one threshold), else `below`: scikit-image's users' `image > threshold_otsu(image)` in one process, the
/// threshold staying on the device between the search and the comparison.
///
/// ```
/// use cliper::{ClApp, Process, ThresholdMask, ThresholdMethod, ThresholdParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[6], &[0.0f32, 0.1, 0.2, 5.0, 5.1, 5.2])?;
/// let y = XData::zeros(&app, &[6])?;
/// ThresholdMask::new(&x, &y, ThresholdParams::new(ThresholdMethod::Otsu), (1.0, 0.0)).run()?;
/// // skimage: threshold_otsu(x) is 0.19296876 (a bin centre just under 0.2), so x > it from 0.2 on
/// assert_eq!(y.to_vec()?, vec![0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ThresholdMask<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: ThresholdParams,
    values: (T, T),
    plan: Prepared<MaskPlan<T>>,
}

struct MaskPlan<T: RealElement> {
    finder: ThresholdValue<T>,
    threshold: XData<T>,
    kernel: Kernel,
    /// The search's layout: the mask pass shares the image among groups as its passes do.
    layout: HistogramLayout,
    index: IndexType,
}

impl<T: RealElement> ThresholdMask<T> {
    /// Binds the process to its arrays; `values` are (above, below).
    pub fn new(input: &XData<T>, output: &XData<T>, params: ThresholdParams, values: (T, T)) -> ThresholdMask<T> {
        ThresholdMask { input: input.clone(), output: output.clone(), params, values, plan: Prepared::default() }
    }

    /// The output's shape: the input's.
    pub fn output_shape(input: &[usize], params: &ThresholdParams) -> Result<Vec<usize>> {
        check_params(params)?;
        Ok(input.to_vec())
    }

    /// The mask of `input` (`values` = (above, below)) in a new array.
    pub fn apply(input: &XData<T>, params: ThresholdParams, values: (T, T)) -> Result<XData<T>> {
        let output = XData::zeros(input.app(), &Self::output_shape(input.shape(), &params)?)?;
        ThresholdMask::new(input, &output, params, values).run()?;
        Ok(output)
    }

    /// After `init`, its search's plan.
    pub fn strategy(&self) -> Option<ThresholdStrategy> {
        self.plan.as_ref().and_then(|plan| plan.finder.strategy())
    }
}

impl<T: RealElement> Process for ThresholdMask<T> {
    fn name(&self) -> &str {
        "ThresholdMask"
    }

    fn init(&mut self) -> Result<()> {
        if self.params.method.count() != 1 {
            return Err(Error::invalid(
                "ThresholdMask",
                "a mask needs a method of one threshold (otsu, yen, triangle, li), not multiotsu",
            ));
        }
        if self.output.shape() != self.input.shape() {
            return Err(Error::shape("ThresholdMask", self.input.shape(), self.output.shape()));
        }
        if !self.output.is_contiguous() {
            return Err(Error::invalid(
                "ThresholdMask",
                format!("needs a contiguous output, got strides {:?}", self.output.strides()),
            ));
        }
        let threshold = XData::zeros(self.input.app(), &[1])?;
        let mut finder = ThresholdValue::new(&self.input, &threshold, self.params);
        finder.init()?;
        // The search's own program (its layout's options), so the mask costs no second build.
        let layout = finder.plan.get("ThresholdMask")?.layout();
        let index = pass_index(&self.input, &self.output, &layout);
        let program = threshold_program::<T>(self.input.app(), index, &layout)?;
        let kernel = program.kernel("threshold_mask")?.owned_by("ThresholdMask");
        self.plan.set(MaskPlan { finder, threshold, kernel, layout, index });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("ThresholdMask")?;
        plan.finder.launch()?;
        let (idx, layout) = (plan.index, plan.layout);
        let n = self.input.len();
        plan.kernel
            .launch()
            .input("x", &self.input)
            .index("x_off", idx, self.input.offset() as u64)
            .index("n", idx, n as u64)
            .index("block", idx, layout.block(n) as u64)
            .input("t", &plan.threshold)
            .index("t_off", idx, plan.threshold.offset() as u64)
            .output("y", &self.output)
            .index("y_off", idx, self.output.offset() as u64)
            .scalar("above", self.values.0)
            .scalar("below", self.values.1)
            .global(&[layout.groups * layout.work_items])
            .local(&[layout.work_items])
            .work((2 * n * std::mem::size_of::<T>()) as u64, n as u64)
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
