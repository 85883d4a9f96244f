//! [`Statistic`]: numpy's reductions of real data — `sum`, `prod`, `min`, `max`, `mean`, `var`, `std`, `argmin`,
//! `argmax` — over any set of axes, with `keepdims`. Kernels: `kernels/reduce_stat.cl`.

use crate::app::{DeviceKind, Kernel};
use crate::data::XData;
use crate::element::{Element, RealElement};
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{MAX_AXES, index_type_for};
use crate::process::{Prepared, Process};

/// Which of numpy's reductions a [`Statistic`] computes.
///
/// ```
/// use cliper::StatKind;
/// assert_eq!("std".parse::<StatKind>()?, StatKind::Std);
/// assert!(StatKind::ArgMax.gives_indices() && !StatKind::Mean.gives_indices());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatKind {
    /// numpy.sum (no elements: 0).
    Sum,
    /// numpy.prod (no elements: 1).
    Prod,
    /// numpy.min (NaN when any element is; no elements: refused).
    Min,
    /// numpy.max (NaN when any element is; no elements: refused).
    Max,
    /// numpy.mean (no elements: NaN).
    Mean,
    /// numpy.var with `ddof`: Σ(x − mean)² / max(n − ddof, 0).
    Var,
    /// numpy.std: the square root of `Var`.
    Std,
    /// numpy.argmin: the index of the first minimum in the flattened reduced axes (the first NaN if any).
    ArgMin,
    /// numpy.argmax: the index of the first maximum (the first NaN if any).
    ArgMax,
}

impl StatKind {
    /// Every kind, by numpy's name.
    pub const ALL: [(&'static str, StatKind); 9] = [
        ("sum", StatKind::Sum),
        ("prod", StatKind::Prod),
        ("min", StatKind::Min),
        ("max", StatKind::Max),
        ("mean", StatKind::Mean),
        ("var", StatKind::Var),
        ("std", StatKind::Std),
        ("argmin", StatKind::ArgMin),
        ("argmax", StatKind::ArgMax),
    ];

    /// numpy's name.
    pub fn name(self) -> &'static str {
        StatKind::ALL.iter().find(|(_, k)| *k == self).map_or("?", |(n, _)| n)
    }

    /// Whether the result is indices (argmin, argmax: numpy's int64).
    pub fn gives_indices(self) -> bool {
        matches!(self, StatKind::ArgMin | StatKind::ArgMax)
    }

    /// Whether a reduction of no elements has no value (numpy raises).
    fn needs_elements(self) -> bool {
        matches!(self, StatKind::Min | StatKind::Max | StatKind::ArgMin | StatKind::ArgMax)
    }

    /// The kernel's STAT code.
    fn code(self) -> u32 {
        StatKind::ALL.iter().position(|(_, k)| *k == self).map_or(0, |p| p as u32 + 1)
    }
}

impl std::str::FromStr for StatKind {
    type Err = Error;
    fn from_str(name: &str) -> Result<StatKind> {
        StatKind::ALL.iter().find(|(n, _)| *n == name).map(|(_, k)| *k).ok_or_else(|| {
            let names: Vec<&str> = StatKind::ALL.iter().map(|(n, _)| *n).collect();
            Error::invalid("reduce", format!("unknown operation `{name}`; numpy's are {}", names.join(", ")))
        })
    }
}

/// The parameters of a [`Statistic`]: the kind, the axes reduced (every axis by default), `keepdims` and `ddof`.
///
/// ```
/// use cliper::{StatKind, StatParams};
/// let p = StatParams::new(StatKind::Var).axes(&[0, 2]).keepdims(true).ddof(1.0);
/// assert_eq!(cliper::Statistic::<f32, f32>::output_shape(&[4, 5, 6], &p)?, vec![1, 5, 1]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct StatParams {
    kind: StatKind,
    axes: Option<Vec<usize>>,
    keepdims: bool,
    ddof: f64,
    groups: Option<bool>,
}

impl StatParams {
    /// `kind` over every axis, without kept axes, ddof 0.
    pub fn new(kind: StatKind) -> StatParams {
        StatParams { kind, axes: None, keepdims: false, ddof: 0.0, groups: None }
    }

    /// Reduce only these axes.
    pub fn axes(mut self, axes: &[usize]) -> StatParams {
        self.axes = Some(axes.to_vec());
        self
    }

    /// Keep the reduced axes with extent 1 (numpy's keepdims).
    pub fn keepdims(mut self, keep: bool) -> StatParams {
        self.keepdims = keep;
        self
    }

    /// Whether whole work-groups reduce each chunk (`stat_group`) where that is possible — each output's elements
    /// one walk of unit stride, not an argmin/argmax: `Some(true)` wherever possible, `Some(false)` never; by
    /// default (`None`) on GPUs only, where neighbouring work-items must read neighbouring addresses (a CPU runs
    /// a work-group's items one after the other: PoCL took 80 ms for a 256³ mean by groups, 22 ms by one
    /// work-item per chunk). The results agree within rounding either way.
    ///
    /// ```
    /// use cliper::{ClApp, Process, StatKind, StatParams, Statistic, XData};
    /// let app = ClApp::new()?;
    /// let x = XData::<f32>::zeros(&app, &[4, 3000])?;
    /// let p = StatParams::new(StatKind::Sum).axes(&[1]).groups(Some(true));
    /// let mut sum = Statistic::new(&x, &XData::<f32>::zeros(&app, &[4])?, p);
    /// sum.init()?;
    /// assert!(sum.strategy().unwrap().group > 0);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn groups(mut self, groups: Option<bool>) -> StatParams {
        self.groups = groups;
        self
    }

    /// numpy's ddof for var and std.
    pub fn ddof(mut self, ddof: f64) -> StatParams {
        self.ddof = ddof;
        self
    }

    /// The kind.
    pub fn kind(&self) -> StatKind {
        self.kind
    }

    /// Whether each axis of `shape` is reduced, checked: an axis out of range or given twice is refused.
    fn reduced(&self, shape: &[usize]) -> Result<Vec<bool>> {
        let mut reduced = vec![self.axes.is_none(); shape.len()];
        for &a in self.axes.iter().flatten() {
            let slot = reduced.get_mut(a).ok_or_else(|| Error::axis("reduce", a as isize, shape))?;
            if *slot {
                return Err(Error::invalid("reduce", format!("axis {a} is given twice (shape {shape:?})")));
            }
            *slot = true;
        }
        Ok(reduced)
    }
}

/// How a [`Statistic`] reduces: each output's elements cut into `chunks` chunks of up to `chunk` elements, each
/// reduced by one work-item (`stat_chunks`) or, where each output's elements are one walk of unit stride (a row,
/// the whole array) and the statistic is not an argmin/argmax, by a work-group of `group` work-items on
/// interleaved elements (`stat_group`); then the chunk states merged (`stat_merge`).
///
/// ```
/// use cliper::{ClApp, Process, StatKind, StatParams, StatStrategy, Statistic, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[3, 5000])?;
/// let mut mean = Statistic::new(&x, &XData::<f32>::zeros(&app, &[3])?, StatParams::new(StatKind::Mean).axes(&[1]));
/// mean.init()?;
/// let s: StatStrategy = mean.strategy().unwrap();
/// assert!(s.chunks >= 1 && s.chunks * s.chunk >= 5000);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatStrategy {
    /// Chunks per output (0: no outputs, nothing launched).
    pub chunks: u64,
    /// Elements per chunk.
    pub chunk: u64,
    /// Work-items reducing one chunk together (0: one work-item per chunk).
    pub group: usize,
    /// The index type.
    pub index: IndexType,
}

impl std::fmt::Display for StatStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.chunks == 0 {
            return write!(f, "none");
        }
        if self.group > 0 {
            return write!(
                f,
                "stat_group: {} chunk(s) of up to {} elements per output, {} work-items each, merged by stat_merge \
                 ({} indices)",
                self.chunks,
                self.chunk,
                self.group,
                self.index.cl_type()
            );
        }
        write!(
            f,
            "stat_chunks: {} chunk(s) of up to {} elements per output, merged in order by stat_merge ({} indices)",
            self.chunks,
            self.chunk,
            self.index.cl_type()
        )
    }
}

/// numpy's reductions of real data over any axes: `x.sum(axis=…, keepdims=…)`, `prod`, `min`, `max`, `mean`,
/// `var`/`std` (with `ddof`), `argmin`/`argmax` (the first occurrence's index in the flattened reduced axes, as
/// numpy gives for one axis; the output is float64 holding integers, which a chain writes as int64). Two passes,
/// no atomics: the reduced elements of each output are cut into chunks, each reduced by one work-item (or, along
/// unit stride, a work-group) to a state (for the moments the mean and M2 from sums shifted by the first element,
/// merged by Chan's rule), then the chunks merged. Accumulates in
/// the element type, as numpy does (its sums are pairwise, ours chunked: float32 results differ by rounding).
///
/// ```
/// use cliper::{ClApp, Process, StatKind, StatParams, Statistic, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 3], &[1.0f32, 5.0, 2.0, 7.0, 0.0, 7.0])?;
/// let rows = Statistic::<f32, f32>::apply(&x, &StatParams::new(StatKind::Mean).axes(&[1]))?;
/// assert_eq!(rows.to_vec()?, vec![8.0 / 3.0, 14.0 / 3.0]);
/// let first = Statistic::<f32, f64>::apply(&x, &StatParams::new(StatKind::ArgMax))?;
/// assert_eq!(first.to_vec()?, vec![3.0]); // the first 7
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Statistic<T: RealElement, U: RealElement> {
    x: XData<T>,
    out: XData<U>,
    params: StatParams,
    plan: Prepared<Plan>,
}

struct Plan {
    kernels: Option<(Kernel, Kernel)>,
    /// Work-items per group when whole work-groups reduce each chunk (`stat_group`); 0 for one work-item per chunk.
    group_size: usize,
    /// Work-items per group of `stat_chunks`: 1 on CPUs, which run a work-group on one core (32 chunks of a sum
    /// in one group of 64 kept PoCL's second core idle), GROUP elsewhere.
    item_groups: usize,
    index: IndexType,
    kept: Axes,
    reduced: Axes,
    len: u64,
    chunk: u64,
    chunks: u64,
    outputs: u64,
    states: XData<T64>,
    indices: XData<T64>,
}

/// The states' buffers are plain 8-byte slots (reals of the element type and ulong counts), allocated as f64.
type T64 = f64;

/// Extents and input strides of up to eight axes, merged where the input is gap-free across them.
#[derive(Clone, Copy, Default)]
struct Axes {
    nd: u32,
    shape: [u64; MAX_AXES],
    strides: [u64; MAX_AXES],
}

impl Axes {
    fn new(axes: &[(usize, usize)], shape: &[usize]) -> Result<Axes> {
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for &(n, s) in axes.iter().filter(|(n, _)| *n != 1) {
            match merged.last_mut() {
                Some((m, t)) if *t == n * s => {
                    *m *= n;
                    *t = s;
                }
                _ => merged.push((n, s)),
            }
        }
        if merged.len() > MAX_AXES {
            return Err(Error::Unsupported {
                what: format!("reduce: shape {shape:?} needs {} axes after merging; at most {MAX_AXES}", merged.len()),
            });
        }
        Ok(Axes {
            nd: merged.len() as u32,
            shape: std::array::from_fn(|k| merged.get(k).map_or(1, |a| a.0 as u64)),
            strides: std::array::from_fn(|k| merged.get(k).map_or(0, |a| a.1 as u64)),
        })
    }
}

const GROUP: usize = 64;

/// Elements at least in a chunk: fewer would spend more on the states than on the data.
const MIN_CHUNK: u64 = 1024;

impl<T: RealElement, U: RealElement> Statistic<T, U> {
    /// The reduction `params` describe of `x` into `out` (of [`Statistic::output_shape`]; `U` is `T`, or f64 for
    /// argmin/argmax).
    pub fn new(x: &XData<T>, out: &XData<U>, params: StatParams) -> Statistic<T, U> {
        Statistic { x: x.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, reduces `x` into it once and returns it.
    pub fn apply(x: &XData<T>, params: &StatParams) -> Result<XData<U>> {
        let out = XData::uninit(x.app(), "reduce", &Self::output_shape(x.shape(), params)?)?;
        Statistic::new(x, &out, params.clone()).run()?;
        Ok(out)
    }

    /// The chunking `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<StatStrategy> {
        self.plan.as_ref().map(|p| StatStrategy {
            chunks: if p.kernels.is_some() { p.chunks } else { 0 },
            chunk: p.chunk,
            group: p.group_size,
            index: p.index,
        })
    }

    /// The output shape: the axes not reduced (the reduced ones as 1 with keepdims). Refuses an axis out of range
    /// or given twice, and min/max/argmin/argmax of no elements (numpy raises: no identity).
    pub fn output_shape(shape: &[usize], params: &StatParams) -> Result<Vec<usize>> {
        let reduced = params.reduced(shape)?;
        let len: usize = shape.iter().zip(&reduced).filter(|(_, r)| **r).map(|(n, _)| n).product();
        let outputs: usize = shape.iter().zip(&reduced).filter(|(_, r)| !**r).map(|(n, _)| n).product();
        if len == 0 && outputs > 0 && params.kind.needs_elements() {
            return Err(Error::invalid(
                "reduce",
                format!(
                    "{} of no elements (shape {shape:?}, axes {:?}): a zero-size reduction has no identity",
                    params.kind.name(),
                    params.axes.clone().unwrap_or_else(|| (0..shape.len()).collect())
                ),
            ));
        }
        Ok(shape
            .iter()
            .zip(&reduced)
            .filter_map(|(&n, &r)| match (r, params.keepdims) {
                (false, _) => Some(n),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect())
    }
}

impl<T: RealElement, U: RealElement> Process for Statistic<T, U> {
    fn name(&self) -> &str {
        "reduce"
    }

    fn init(&mut self) -> Result<()> {
        let (x, out, params) = (&self.x, &self.out, &self.params);
        let expected = Self::output_shape(x.shape(), params)?;
        if out.shape() != expected {
            return Err(Error::shape_because("reduce", &expected, out.shape(), "the reduction's shape"));
        }
        let wanted_out = if params.kind.gives_indices() { f64::CL_TYPE } else { T::CL_TYPE };
        if U::CL_TYPE != wanted_out {
            return Err(Error::invalid(
                "reduce",
                format!("{} of {} data writes {wanted_out}, not {}", params.kind.name(), T::CL_TYPE, U::CL_TYPE),
            ));
        }
        if !out.is_contiguous() {
            return Err(Error::Unsupported { what: "reduce into a strided view: give a contiguous output".into() });
        }
        let reduced = params.reduced(x.shape())?;
        let pick = |want: bool| -> Vec<(usize, usize)> {
            x.shape()
                .iter()
                .zip(x.strides())
                .zip(&reduced)
                .filter(|(_, r)| **r == want)
                .map(|(a, _)| (*a.0, *a.1))
                .collect()
        };
        let (kept, gone) = (pick(false), pick(true));
        let len: u64 = gone.iter().map(|a| a.0 as u64).product();
        let outputs: u64 = kept.iter().map(|a| a.0 as u64).product();
        let reduced_axes = Axes::new(&gone, x.shape())?;
        let info = x.app().device();
        let cpu = info.kind == DeviceKind::Cpu;
        // A single walk per output (one reduced axis after merging) along unit stride, or the whole array: whole
        // work-groups reduce each chunk with neighbouring work-items on neighbouring elements. One work-item per
        // chunk walking it alone reads addresses a chunk apart across work-items — on an H200, a 512³ sum ran at
        // 132 GB/s and a mean along the last axis at 540 GB/s so. Along a slow axis, neighbouring work-items are
        // neighbouring outputs, already neighbouring addresses: one work-item per output there.
        let contiguous = reduced_axes.nd <= 1 && (reduced_axes.strides[0] == 1 || outputs == 1);
        let grouped = params.groups.unwrap_or(!cpu);
        let group_size = if grouped && !params.kind.gives_indices() && contiguous && len >= 256 {
            if len >= 8192 { 256 } else { 64 }
        } else {
            0
        };
        // Enough work (items, or groups) to fill the device: split each output's elements into chunks. A CPU runs
        // a work-group on one core: at least 4 groups per core. On a GPU 4 groups of 256 per compute unit keep
        // the loads in flight, and stat_merge walks each output's states one after another: 16 per compute unit
        // made an H200's 8192² sum spend 0.119 ms merging 2112 states after a 0.080 ms pass.
        let target: u64 = match (group_size, cpu) {
            (0, true) => (info.compute_units as u64 * 16).max(1),
            (0, false) => 1 << 16,
            (_, true) => (info.compute_units as u64 * 4).max(1),
            (_, false) => (info.compute_units as u64 * 4).max(64),
        };
        let least = if group_size > 0 { (group_size as u64 * 16).max(MIN_CHUNK) } else { MIN_CHUNK };
        let chunks = target.checked_div(outputs).map_or(1, |c| c.clamp(1, (len / least).max(1)));
        let chunk = len.div_ceil(chunks).max(1);
        let states_n = (outputs * chunks) as usize;
        let mut plan = Plan {
            kernels: None,
            group_size,
            item_groups: if cpu { 1 } else { GROUP },
            index: index_type_for(&[x.layout()], &[len, outputs * chunks, chunk * chunks]),
            kept: Axes::new(&kept, x.shape())?,
            reduced: reduced_axes,
            len,
            chunk,
            chunks,
            outputs,
            states: XData::uninit(x.app(), "reduce", &[2 * states_n.max(1)])?,
            indices: XData::uninit(x.app(), "reduce", &[states_n.max(1)])?,
        };
        if outputs > 0 {
            let grouped = if group_size > 0 { format!(" -DGROUP_SIZE={group_size}") } else { String::new() };
            let options = format!(
                "{} -DIDX={} -DSTAT={} -DOUT={}{grouped}",
                T::build_options(),
                plan.index.cl_type(),
                params.kind.code(),
                wanted_out
            );
            let program =
                x.app().build_program("reduce_stat.cl", &kernels::with_common(kernels::REDUCE_STAT), &options)?;
            let first = if group_size > 0 { "stat_group" } else { "stat_chunks" };
            plan.kernels =
                Some((program.kernel(first)?.owned_by("reduce"), program.kernel("stat_merge")?.owned_by("reduce")));
        }
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("reduce")?;
        let idx = plan.index;
        let ddof = T::from_c64(num_complex::Complex64::new(self.params.ddof, 0.0));
        let states = plan.outputs * plan.chunks;
        let (kept, reduced) = (plan.kept, plan.reduced);
        let Some((chunks, merge)) = plan.kernels.as_mut() else { return Ok(()) };
        let groups = |n: u64, size: usize| (n as usize).div_ceil(size).clamp(1, 1 << 16) * size;
        // stat_group: a work-group per state; stat_chunks: a work-item per state. The same arguments.
        let (global, local) = if plan.group_size > 0 {
            ((states as usize).clamp(1, 1 << 16) * plan.group_size, plan.group_size)
        } else {
            (groups(states, plan.item_groups), plan.item_groups)
        };
        chunks
            .launch()
            .input("x", &self.x)
            .index("x0", idx, self.x.offset() as u64)
            .scalar("knd", kept.nd)
            .scalar("kshape", kept.shape)
            .scalar("kstride", kept.strides)
            .scalar("rnd", reduced.nd)
            .scalar("rshape", reduced.shape)
            .scalar("rstride", reduced.strides)
            .index("len", idx, plan.len)
            .index("chunk", idx, plan.chunk)
            .index("chunks", idx, plan.chunks)
            .index("states", idx, states)
            .output("sv", &plan.states)
            .output("si", &plan.indices)
            .global(&[global])
            .local(&[local])
            .work(plan.len * plan.outputs * std::mem::size_of::<T>() as u64, 0)
            .enqueue()?;
        merge
            .launch()
            .input("sv", &plan.states)
            .input("si", &plan.indices)
            .index("chunks", idx, plan.chunks)
            .index("outputs", idx, plan.outputs)
            .index("len", idx, plan.len)
            .scalar("ddof", ddof)
            .output("out", &self.out)
            .index("o0", idx, self.out.offset() as u64)
            .global(&[groups(plan.outputs, GROUP)])
            .local(&[GROUP])
            .work(states * 3 * 8, 0)
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
