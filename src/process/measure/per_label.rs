//! [`Measure`]: scipy.ndimage's measurements of an image over labels, one table row per label.

use crate::Launch;
use crate::app::ffi::{self, Region};
use crate::app::{DeviceKind, Kernel};
use crate::data::{HostCommand, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::index_type_for;
use crate::process::{Prepared, Process};
use std::str::FromStr;

/// Work-items per group.
const GROUP: usize = 64;
/// The largest label a label image may hold (as `kernels/measure.cl`'s MOST_LABEL): a row of accumulators each.
const MOST_LABEL: f64 = (1u64 << 28) as f64;
/// Doubles per row of the sums, ulongs of the extrema and of the boxes (`kernels/measure.cl`).
const ACC_STRIDE: usize = 6;
const KEY_STRIDE: usize = 4;
const BOX_STRIDE: usize = 6;
/// Bits of the kernels' `flags`.
const WANT_SUMS: u32 = 1;
const WANT_COM: u32 = 2;
const WANT_EXTREMA: u32 = 4;
const WANT_BOX: u32 = 8;
const WANT_SQUARES: u32 = 16;
const WANT_POSITIONS: u32 = 32;

/// One statistic of a [`Measure`], named as scipy.ndimage's function that computes it.
///
/// ```
/// use cliper::MeasureStat;
/// let stats = MeasureStat::parse_list("sum_labels,extrema,center_of_mass")?;
/// assert_eq!(stats.len(), 6); // extrema is minimum, maximum and their positions
/// assert_eq!(MeasureStat::CenterOfMass.columns(2), ["center_of_mass-0", "center_of_mass-1"]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeasureStat {
    /// The number of elements (regionprops' area; scipy: `sum_labels` of ones).
    Count,
    /// `sum_labels`: the sum of the values.
    Sum,
    /// `mean`.
    Mean,
    /// `variance`: the mean squared deviation from the mean (scipy's, not divided by n − 1).
    Variance,
    /// `standard_deviation`: the variance's square root.
    StandardDeviation,
    /// `minimum` (NaN ignored, as scipy's sorted order puts it last; NaN only when every value is).
    Minimum,
    /// `maximum` (NaN when a value is NaN, as scipy's).
    Maximum,
    /// `minimum_position`: the index of the first minimum in C order, one column per axis.
    MinimumPosition,
    /// `maximum_position`: the index of the first maximum in C order, one column per axis.
    MaximumPosition,
    /// `center_of_mass`: the value-weighted mean index along each axis.
    CenterOfMass,
    /// `find_objects`: the bounding box, regionprops' `bbox` columns — the starts along each axis, then the stops
    /// (one past the end); NaN for a label with no element (scipy's `None`).
    Bbox,
}

impl MeasureStat {
    /// Every statistic, in the order tables list them.
    pub const ALL: [MeasureStat; 11] = [
        MeasureStat::Count,
        MeasureStat::Sum,
        MeasureStat::Mean,
        MeasureStat::Variance,
        MeasureStat::StandardDeviation,
        MeasureStat::Minimum,
        MeasureStat::Maximum,
        MeasureStat::MinimumPosition,
        MeasureStat::MaximumPosition,
        MeasureStat::CenterOfMass,
        MeasureStat::Bbox,
    ];

    /// Its name: scipy.ndimage's function (`sum` for `sum_labels`, `bbox` for `find_objects`' boxes).
    pub fn name(self) -> &'static str {
        match self {
            MeasureStat::Count => "count",
            MeasureStat::Sum => "sum",
            MeasureStat::Mean => "mean",
            MeasureStat::Variance => "variance",
            MeasureStat::StandardDeviation => "standard_deviation",
            MeasureStat::Minimum => "minimum",
            MeasureStat::Maximum => "maximum",
            MeasureStat::MinimumPosition => "minimum_position",
            MeasureStat::MaximumPosition => "maximum_position",
            MeasureStat::CenterOfMass => "center_of_mass",
            MeasureStat::Bbox => "bbox",
        }
    }

    /// Its table columns for data of `ndim` axes: its name, or `name-k` for each value of a vector (regionprops_table's
    /// naming).
    pub fn columns(self, ndim: usize) -> Vec<String> {
        let width = match self {
            MeasureStat::MinimumPosition | MeasureStat::MaximumPosition | MeasureStat::CenterOfMass => ndim,
            MeasureStat::Bbox => 2 * ndim,
            _ => return vec![self.name().to_string()],
        };
        (0..width).map(|k| format!("{}-{k}", self.name())).collect()
    }

    /// A comma-separated list of names; `extrema` stands for minimum, maximum and their positions (scipy's
    /// `extrema`), `sum_labels` for sum and `find_objects` for bbox. Unknown names are refused, listing the known.
    pub fn parse_list(text: &str) -> Result<Vec<MeasureStat>> {
        let mut stats = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "extrema" {
                stats.extend([
                    MeasureStat::Minimum,
                    MeasureStat::Maximum,
                    MeasureStat::MinimumPosition,
                    MeasureStat::MaximumPosition,
                ]);
            } else {
                stats.push(name.parse()?);
            }
        }
        Ok(stats)
    }

    fn flags(self) -> u32 {
        match self {
            MeasureStat::Count | MeasureStat::Sum | MeasureStat::Mean => WANT_SUMS,
            MeasureStat::Variance | MeasureStat::StandardDeviation => WANT_SUMS | WANT_SQUARES,
            MeasureStat::Minimum | MeasureStat::Maximum => WANT_SUMS | WANT_EXTREMA,
            MeasureStat::MinimumPosition | MeasureStat::MaximumPosition => WANT_SUMS | WANT_EXTREMA | WANT_POSITIONS,
            MeasureStat::CenterOfMass => WANT_SUMS | WANT_COM,
            MeasureStat::Bbox => WANT_SUMS | WANT_BOX,
        }
    }
}

impl FromStr for MeasureStat {
    type Err = Error;
    fn from_str(text: &str) -> Result<MeasureStat> {
        let alias = match text {
            "sum_labels" => "sum",
            "find_objects" => "bbox",
            other => other,
        };
        MeasureStat::ALL.into_iter().find(|s| s.name() == alias).ok_or_else(|| {
            let known: Vec<&str> = MeasureStat::ALL.iter().map(|s| s.name()).collect();
            Error::invalid("measure", format!("unknown statistic `{text}`: {}, or extrema", known.join(", ")))
        })
    }
}

/// Which labels a [`Measure`] gives rows for: scipy's `index`.
///
/// ```
/// use cliper::{LabelRows, MeasureParams, MeasureStat};
/// let p = MeasureParams::new(&[MeasureStat::Mean], LabelRows::Labels(vec![3.0, 1.0]));
/// assert_eq!(p.rows.len(), 2); // one row each, in this order
/// assert_eq!(LabelRows::Positive.len(), 1); // scipy's index=None: every label > 0 as one region
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum LabelRows {
    /// A row for each of these labels, in order (whole numbers from 0; a label no element has gets scipy's values
    /// for it: a count of 0, a mean of NaN, a minimum of 0).
    Labels(Vec<f64>),
    /// One row for every element whose label is above 0, as one region (scipy's `index=None`).
    Positive,
}

impl LabelRows {
    /// How many rows.
    pub fn len(&self) -> usize {
        match self {
            LabelRows::Labels(labels) => labels.len(),
            LabelRows::Positive => 1,
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The settings of a [`Measure`]: the statistics (table columns, after the label) and the rows.
///
/// ```
/// use cliper::{LabelRows, MeasureParams, MeasureStat};
/// let p = MeasureParams::new(&[MeasureStat::Count, MeasureStat::CenterOfMass], LabelRows::Labels(vec![1.0, 2.0]));
/// assert_eq!(p.columns(2), ["label", "count", "center_of_mass-0", "center_of_mass-1"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureParams {
    /// The statistics, in column order.
    pub stats: Vec<MeasureStat>,
    /// The labels measured.
    pub rows: LabelRows,
}

impl MeasureParams {
    /// `stats` of the labels `rows` names.
    pub fn new(stats: &[MeasureStat], rows: LabelRows) -> MeasureParams {
        MeasureParams { stats: stats.to_vec(), rows }
    }

    /// The table's columns for data of `ndim` axes: `label`, then each statistic's.
    pub fn columns(&self, ndim: usize) -> Vec<String> {
        std::iter::once("label".to_string()).chain(self.stats.iter().flat_map(|s| s.columns(ndim))).collect()
    }

    fn flags(&self) -> u32 {
        self.stats.iter().fold(WANT_SUMS, |f, s| f | s.flags())
    }

    /// Refuses what the kernels cannot measure: no statistic, more than three axes, a label that is not a whole
    /// number below 2^28.
    fn check(&self, shape: &[usize]) -> Result<()> {
        if self.stats.is_empty() {
            return Err(Error::invalid("measure", "no statistic asked for"));
        }
        if shape.is_empty() || shape.len() > 3 {
            return Err(Error::invalid("measure", format!("measures 1 to 3 axes; the data has shape {shape:?}")));
        }
        if let LabelRows::Labels(labels) = &self.rows
            && let Some(bad) = labels.iter().find(|l| !(**l >= 0.0 && l.fract() == 0.0 && **l < MOST_LABEL))
        {
            return Err(Error::invalid(
                "measure",
                format!("the label {bad} is not a whole number from 0 to 2^28 − 1 (the labels `label` writes)"),
            ));
        }
        if shape.iter().product::<usize>() as u64 >= u64::from(u32::MAX) {
            return Err(Error::Unsupported {
                what: format!("measure of shape {shape:?}: at most 2^32 − 1 elements")
            });
        }
        Ok(())
    }
}

/// How a [`Measure`] ran: its passes over the data and the elements each work-item walks.
///
/// ```
/// use cliper::{ClApp, LabelRows, Measure, MeasureParams, MeasureStat, Process, XData};
/// let app = ClApp::new()?;
/// let labels = XData::from_slice(&app, &[2, 3], &[1.0f32, 1.0, 0.0, 2.0, 2.0, 2.0])?;
/// let params = MeasureParams::new(&[MeasureStat::Variance], LabelRows::Labels(vec![1.0, 2.0]));
/// let out = XData::zeros(&app, &Measure::<f32>::output_shape(labels.shape(), &params)?)?;
/// let mut m = Measure::new(Some(&labels), &labels, &out, params);
/// m.init()?;
/// assert_eq!(m.strategy().unwrap().passes, 2); // the variance needs the mean first
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasureStrategy {
    /// Passes over the data: 1, or 2 when variances or positions need the first pass's sums or extrema.
    pub passes: usize,
    /// Consecutive elements per work-item (a run of one label costs one atomic update per accumulator).
    pub chunk: usize,
    /// The index type.
    pub index: IndexType,
}

impl std::fmt::Display for MeasureStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} pass(es), {} elements per work-item, double accumulators by atomics per run of a label ({} indices)",
            self.passes,
            self.chunk,
            self.index.cl_type()
        )
    }
}

/// scipy.ndimage's measurements of `image` over `labels` (same shape, 1 to 3 axes), as a table `[rows, columns]`
/// of doubles: a row per label of [`MeasureParams::rows`], the columns of [`MeasureParams::columns`] (the label,
/// then each statistic). Without an image, every value is 1: counts, unweighted centroids and boxes of the
/// labels themselves. Sums accumulate in double, as scipy's do (float32 results differ from scipy's only by the
/// order of the additions); a label absent from the data gets scipy's values for it (a count and sum of 0, a
/// mean, variance and centre of NaN, extrema and positions of 0, a box of NaN).
///
/// ```
/// use cliper::{ClApp, LabelRows, Measure, MeasureParams, MeasureStat, XData};
/// let app = ClApp::new()?;
/// let image = XData::from_slice(&app, &[2, 3], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let labels = XData::from_slice(&app, &[2, 3], &[1.0f64, 1.0, 0.0, 2.0, 2.0, 2.0])?;
/// let stats = [MeasureStat::Mean, MeasureStat::MaximumPosition];
/// let table = Measure::apply(Some(&image), &labels, MeasureParams::new(&stats, LabelRows::Labels(vec![1.0, 2.0])))?;
/// assert_eq!(table.shape(), &[2, 4]); // label, mean, maximum_position-0, maximum_position-1
/// assert_eq!(table.to_vec()?, vec![1.0, 1.5, 0.0, 1.0, 2.0, 5.0, 1.0, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Measure<T: RealElement> {
    image: Option<XData<T>>,
    labels: XData<T>,
    out: XData<f64>,
    params: MeasureParams,
    plan: Prepared<Plan>,
}

struct Plan {
    kernels: Kernels,
    state: State,
}

/// The kernels: clearing, the first pass, the second when asked for.
struct Kernels {
    clear: Kernel,
    sums: Kernel,
    second: Option<Kernel>,
}

/// The accumulators, the label → row lookup and the launch's shape.
struct State {
    acc: XData<f64>,
    keys: XData<f64>,
    boxes: XData<f64>,
    lookup: XData<f32>,
    lookup_len: u32,
    mode: u32,
    rows: usize,
    chunk: usize,
    index: IndexType,
}

impl<T: RealElement> Measure<T> {
    /// The measurements `params` describe of `image` (or of ones) over `labels` into `out` (of
    /// [`Measure::output_shape`]).
    pub fn new(image: Option<&XData<T>>, labels: &XData<T>, out: &XData<f64>, params: MeasureParams) -> Measure<T> {
        Measure { image: image.cloned(), labels: labels.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the table, measures once and returns it.
    pub fn apply(image: Option<&XData<T>>, labels: &XData<T>, params: MeasureParams) -> Result<XData<f64>> {
        let out = XData::uninit(labels.app(), "measure", &Self::output_shape(labels.shape(), &params)?)?;
        Measure::new(image, labels, &out, params).run()?;
        Ok(out)
    }

    /// The table's shape for labels of `shape`: a row per label, a column per value.
    ///
    /// ```
    /// use cliper::{LabelRows, Measure, MeasureParams, MeasureStat};
    /// let p = MeasureParams::new(&[MeasureStat::Bbox], LabelRows::Labels(vec![1.0, 2.0, 5.0]));
    /// assert_eq!(Measure::<f32>::output_shape(&[30, 40, 50], &p)?, vec![3, 7]);
    /// assert!(Measure::<f32>::output_shape(&[2, 3, 4, 5], &p).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &MeasureParams) -> Result<Vec<usize>> {
        params.check(shape)?;
        Ok(vec![params.rows.len(), params.columns(shape.len()).len()])
    }

    /// The labels above 0 that `labels` holds, in increasing order (scipy's `numpy.unique(labels[labels > 0])`),
    /// read by two passes on the device. Refuses labels that are not whole numbers from 0 to 2^28 − 1, naming
    /// the first one and its index.
    ///
    /// ```
    /// use cliper::{ClApp, Measure, XData};
    /// let app = ClApp::new()?;
    /// let labels = XData::from_slice(&app, &[5], &[0.0f32, 7.0, 2.0, 7.0, 0.0])?;
    /// assert_eq!(Measure::present_labels(&labels)?, vec![2.0, 7.0]);
    /// let fractional = XData::from_slice(&app, &[2], &[1.0f32, 2.5])?;
    /// assert!(Measure::present_labels(&fractional).unwrap_err().to_string().contains("2.5"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn present_labels(labels: &XData<T>) -> Result<Vec<f64>> {
        if !labels.is_contiguous() {
            return Err(contiguous_refusal(labels.shape()));
        }
        let app = labels.app();
        let n = labels.len() as u64;
        if n >= u64::from(u32::MAX) {
            return Err(Error::Unsupported {
                what: format!("measure of shape {:?}: at most 2^32 − 1 elements", labels.shape()),
            });
        }
        let index = index_type_for(&[labels.layout()], &[n]);
        let program = program::<T>(labels, index)?;
        let found = XData::from_slice(app, &[3], &[0.0f32, 0.0, f32::from_bits(u32::MAX)])?;
        if n > 0 {
            let groups = (labels.len().div_ceil(GROUP * 16)).clamp(1, 4096);
            program
                .kernel("measure_scan")?
                .owned_by("measure")
                .launch()
                .input("labels", labels)
                .index("l0", index, labels.offset() as u64)
                .index("n", index, n)
                .in_out("found", &found)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .enqueue()?;
        }
        let found: Vec<u32> = found.to_vec()?.iter().map(|w| w.to_bits()).collect();
        if found[1] > 0 {
            let at = found[2] as usize;
            let value = labels.to_vec()?.get(at).map(|v| v.to_c64().re).unwrap_or(f64::NAN);
            return Err(Error::invalid(
                "measure",
                format!(
                    "{} label(s) are not whole numbers from 0 to 2^28 − 1, the first {value} at flat index {at} of \
                     shape {:?}: give the labels to measure (index)",
                    found[1],
                    labels.shape()
                ),
            ));
        }
        let every: Vec<f64> = (0..=found[0]).map(f64::from).collect();
        let counts = Measure::apply(None, labels, MeasureParams::new(&[MeasureStat::Count], LabelRows::Labels(every)))?;
        let counts = counts.to_vec()?;
        Ok(counts.chunks(2).filter(|row| row[0] > 0.0 && row[1] > 0.0).map(|row| row[0]).collect())
    }

    /// The passes `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<MeasureStrategy> {
        self.plan.as_ref().map(|p| MeasureStrategy {
            passes: 1 + usize::from(p.kernels.second.is_some()),
            chunk: p.state.chunk,
            index: p.state.index,
        })
    }
}

fn contiguous_refusal(shape: &[usize]) -> Error {
    Error::Unsupported { what: format!("measure of a strided view of shape {shape:?}: give contiguous arrays") }
}

fn program<T: RealElement>(labels: &XData<T>, index: IndexType) -> Result<crate::app::Program> {
    labels.app().require::<f64>()?;
    let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
    labels.app().build_program("measure.cl", &kernels::with_common(kernels::MEASURE), &options)
}

/// The inverse of the kernels' `ordered`: a double from its ordered bits.
fn from_ordered(key: u64) -> f64 {
    let bits = if key >> 63 == 1 { key & !(1 << 63) } else { !key };
    f64::from_bits(bits)
}

impl<T: RealElement> Process for Measure<T> {
    fn name(&self) -> &str {
        "measure"
    }

    fn init(&mut self) -> Result<()> {
        let labels = &self.labels;
        let shape = labels.shape().to_vec();
        let expected = Self::output_shape(&shape, &self.params)?;
        if self.out.shape() != expected {
            return Err(Error::shape_because("measure", &expected, self.out.shape(), "the table's shape"));
        }
        if let Some(image) = &self.image
            && image.shape() != labels.shape()
        {
            return Err(Error::shape_because("measure", labels.shape(), image.shape(), "the labels' shape"));
        }
        if !labels.is_contiguous() || self.image.as_ref().is_some_and(|i| !i.is_contiguous()) {
            return Err(contiguous_refusal(&shape));
        }
        if !self.out.is_contiguous() {
            return Err(Error::Unsupported { what: "measure into a strided view: give a contiguous table".into() });
        }
        let app = labels.app().clone();
        let n = labels.len();
        let index = index_type_for(&[labels.layout()], &[n as u64 + 1]);
        let program = program::<T>(labels, index)?;
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by("measure"));
        let (mode, lookup, lookup_len) = match &self.params.rows {
            LabelRows::Positive => (1, vec![-1i32], 1),
            LabelRows::Labels(labels) => {
                let len = labels.iter().fold(0.0f64, |m, &l| m.max(l + 1.0)) as usize;
                let mut lookup = vec![-1i32; len.max(1)];
                for (row, &label) in labels.iter().enumerate().rev() {
                    lookup[label as usize] = row as i32;
                }
                (2, lookup, len as u32)
            }
        };
        let lookup: Vec<f32> = lookup.iter().map(|&r| f32::from_bits(r as u32)).collect();
        let rows = self.params.rows.len().max(1);
        let info = app.device();
        let chunk = if info.kind == DeviceKind::Cpu {
            n.div_ceil((info.compute_units as usize * 16).max(1)).max(4096)
        } else {
            256
        };
        let flags = self.params.flags();
        let kernels = Kernels {
            clear: k("measure_clear")?,
            sums: k("measure_sums")?,
            second: if flags & (WANT_SQUARES | WANT_POSITIONS) != 0 { Some(k("measure_second")?) } else { None },
        };
        let state = State {
            acc: XData::uninit(&app, "measure", &[rows * ACC_STRIDE])?,
            keys: XData::uninit(&app, "measure", &[rows * KEY_STRIDE])?,
            boxes: XData::uninit(&app, "measure", &[rows * BOX_STRIDE])?,
            lookup: XData::from_slice(&app, &[lookup.len()], &lookup)?,
            lookup_len,
            mode,
            rows,
            chunk,
            index,
        };
        self.plan.set(Plan { kernels, state });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let Plan { kernels, state } = self.plan.get("measure")?;
        let idx = state.index;
        let labels = &self.labels;
        let (image, has_image) = match &self.image {
            Some(image) => (image, 1i32),
            None => (labels, 0i32),
        };
        let shape = labels.shape();
        let padded: Vec<usize> = std::iter::repeat_n(1, 3 - shape.len()).chain(shape.iter().copied()).collect();
        let n = labels.len() as u64;
        let flags = self.params.flags();
        kernels
            .clear
            .launch()
            .output("acc", &state.acc)
            .output("keys", &state.keys)
            .output("box", &state.boxes)
            .index("rows", idx, state.rows as u64)
            .global(&[state.rows.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .enqueue()?;
        let items = labels.len().div_ceil(state.chunk);
        let global = [items.div_ceil(GROUP).max(1) * GROUP];
        let bytes = (labels.len() * std::mem::size_of::<T>() * (1 + has_image as usize)) as u64;
        if n > 0 {
            let data = Pass { image, labels, n, has_image, flags };
            data.args(kernels.sums.launch(), state)
                .in_out("box", &state.boxes)
                .scalar("ny", padded[1] as u32)
                .scalar("nx", padded[2] as u32)
                .global(&global)
                .local(&[GROUP])
                .work(bytes, 0)
                .enqueue()?;
            if let Some(second) = kernels.second.as_mut() {
                data.args(second.launch(), state).global(&global).local(&[GROUP]).work(bytes, 0).enqueue()?;
            }
        }
        table_on_host(state, &self.params, shape, &self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// What both passes over the data read: the image (the labels themselves when there is none), the labels and
/// what to accumulate.
struct Pass<'a, T: RealElement> {
    image: &'a XData<T>,
    labels: &'a XData<T>,
    n: u64,
    has_image: i32,
    flags: u32,
}

impl<T: RealElement> Pass<'_, T> {
    /// The arguments the two kernels share, in their order: the data, the label → row lookup, the accumulators.
    fn args<'k>(&self, launch: Launch<'k>, state: &'k State) -> Launch<'k> {
        let idx = state.index;
        launch
            .input("x", self.image)
            .index("x0", idx, self.image.offset() as u64)
            .input("labels", self.labels)
            .index("l0", idx, self.labels.offset() as u64)
            .index("n", idx, self.n)
            .index("chunk", idx, state.chunk as u64)
            .scalar("mode", state.mode)
            .input("rows", &state.lookup)
            .scalar("lookup", state.lookup_len)
            .scalar("flags", self.flags)
            .scalar("has_image", self.has_image)
            .in_out("acc", &state.acc)
            .in_out("keys", &state.keys)
    }
}

/// The table from the accumulators, in a host command that maps them (a few doubles per label) and the table.
fn table_on_host(state: &State, params: &MeasureParams, shape: &[usize], out: &XData<f64>) -> Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    let reads = [
        Region { buffer: state.acc.storage().buffer(), lo: 0, hi: state.acc.len() },
        Region { buffer: state.keys.storage().buffer(), lo: 0, hi: state.keys.len() },
        Region { buffer: state.boxes.storage().buffer(), lo: 0, hi: state.boxes.len() },
    ];
    let write = Region { buffer: out.storage().buffer(), lo: out.offset(), hi: out.offset() + out.len() };
    let bytes = ((state.acc.len() + state.keys.len() + state.boxes.len() + out.len()) * 8) as u64;
    HostCommand::new::<f64, f64>("measure", "measure_table", &[&state.acc, &state.keys, &state.boxes], &[out])?
        .work(bytes, 0)
        .run(|queue| {
            ffi::with_mapped::<f64, f64, ()>(queue, &reads, &write, |read, table| {
                if let [acc, keys, boxes] = read {
                    fill_table(params, shape, acc, keys, boxes, table);
                }
            })
            .map(|((), event)| event)
        })
}

/// Writes each row of the table: the label, then every statistic's values from the row's accumulators.
fn fill_table(params: &MeasureParams, shape: &[usize], acc: &[f64], keys: &[f64], boxes: &[f64], table: &mut [f64]) {
    let ndim = shape.len();
    let width = params.columns(ndim).len();
    let key = |row: usize, k: usize| keys[row * KEY_STRIDE + k].to_bits();
    // A flat index as the coordinates of the last `ndim` axes.
    let unravel = |flat: u64| -> Vec<f64> {
        let mut rest = flat;
        let mut at = vec![0.0; ndim];
        for (axis, &extent) in shape.iter().enumerate().rev() {
            at[axis] = (rest % extent as u64) as f64;
            rest /= extent as u64;
        }
        at
    };
    for (row, line) in table.chunks_mut(width).enumerate().take(params.rows.len()) {
        let a = &acc[row * ACC_STRIDE..(row + 1) * ACC_STRIDE];
        let (count, sum) = (a[0], a[1]);
        let present = count > 0.0;
        let mut values = vec![match &params.rows {
            LabelRows::Labels(labels) => labels[row],
            LabelRows::Positive => f64::NAN,
        }];
        let position = |slot: usize| -> Vec<f64> {
            let p = key(row, slot);
            if present && p != u64::MAX { unravel(p) } else { vec![0.0; ndim] }
        };
        for stat in &params.stats {
            match stat {
                MeasureStat::Count => values.push(count),
                MeasureStat::Sum => values.push(sum),
                MeasureStat::Mean => values.push(sum / count),
                MeasureStat::Variance => values.push(a[2] / count),
                MeasureStat::StandardDeviation => values.push((a[2] / count).sqrt()),
                MeasureStat::Minimum | MeasureStat::Maximum => {
                    let slot = if *stat == MeasureStat::Minimum { 0 } else { 1 };
                    let k = key(row, slot);
                    values.push(match (present, k) {
                        (false, _) => 0.0,
                        (true, u64::MAX) => f64::NAN, // every value NaN: no minimum among numbers
                        (true, k) => from_ordered(k),
                    });
                }
                MeasureStat::MinimumPosition => values.extend(position(2)),
                MeasureStat::MaximumPosition => values.extend(position(3)),
                MeasureStat::CenterOfMass => {
                    // The weighted sums are along z, y, x: the data's axes are the last `ndim` of them.
                    values.extend((3 - ndim..3).map(|k| a[3 + k] / sum));
                }
                MeasureStat::Bbox => {
                    let b = &boxes[row * BOX_STRIDE..(row + 1) * BOX_STRIDE];
                    let bound = |k: usize, end: bool| -> f64 {
                        if !present {
                            return f64::NAN;
                        }
                        let v = b[k + if end { 3 } else { 0 }].to_bits() as f64;
                        if end { v + 1.0 } else { v }
                    };
                    values.extend((3 - ndim..3).map(|k| bound(k, false)));
                    values.extend((3 - ndim..3).map(|k| bound(k, true)));
                }
            }
        }
        line.copy_from_slice(&values);
    }
}
