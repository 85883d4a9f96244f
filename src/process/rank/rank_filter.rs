//! [`RankFilter`]: scipy.ndimage's rank filters on 1–3 axes, batched over the leading axes.
//!
//! Three ways, chosen from the window: a box minimum or maximum runs one axis at a time (`rank_line`: `s` reads
//! per element and axis instead of `s^d`, as scipy does for `size=`); a window of at most 128 taps (49 off GPUs) runs a
//! selection network generated for its size and rank (`network.rs`: registers only, min/max instructions, one
//! program per window and rank); larger windows (a 15×15 median, 129×129) bisect on the values' ordered bits
//! (`rank_bisect`: 32 or 64 counting passes over the window, no storage, any size). On CPU devices the windows
//! too large for a network run on the host's threads instead (`host_rank.rs`: a sorted window sliding along x,
//! or a selection per output).

use super::host_rank::HostRank;
use super::network;
use super::params::{RankKind, RankParams, Window};
use crate::app::Kernel;
use crate::data::{HostRegions, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{PassView, X_STRIDES, Y_STRIDES, array_view, index_type_for, indices, pass_view, view4};
use crate::process::{Prepared, Process};
use num_complex::Complex64;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Work-items per group, and the most groups one launch uses (the kernel loops over the rest).
const GROUP: usize = 256;
const MAX_GROUPS: usize = 1 << 16;
/// The most taps a selection network takes (its values live in registers): 128 on GPUs (a 5×5×5 median); 49 (7×7)
/// on other devices, whose compilers take long over large straight-line kernels — PoCL needed 131 s to build
/// the 125-value network and 5.6 s for 49 values, against 0.3 s for the bisection kernel.
fn network_max(app: &crate::app::ClApp) -> usize {
    if app.device().kind == crate::app::DeviceKind::Gpu { 128 } else { 49 }
}

/// How a [`RankFilter`] runs, as its `strategy()` reports it.
///
/// ```
/// use cliper::{ClApp, Process, RankFilter, RankKind, RankParams, RankStrategy, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[40, 50])?;
/// let y = XData::<f32>::zeros(&app, &[40, 50])?;
/// let mut p = RankFilter::new(&x, &y, RankParams::new(RankKind::Minimum).size(&[15]));
/// p.init()?;
/// assert_eq!(p.strategy(), Some(RankStrategy::Separable { passes: 2 }));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankStrategy {
    /// Nothing to compute (an empty array).
    Nothing,
    /// A box minimum or maximum, one axis per pass.
    Separable {
        /// Passes (axes with a window wider than 1).
        passes: usize,
    },
    /// A selection network in registers.
    Network {
        /// Values per window.
        taps: usize,
        /// Min/max operations per element.
        operations: usize,
    },
    /// Bisection on the values' ordered bits.
    Bisection {
        /// Values per window.
        taps: usize,
    },
    /// The minimum or maximum of a non-flat structuring element (each tap with its value) or of a footprint that
    /// is not a box: one pass over the taps in scipy's order.
    Structured {
        /// Values per window.
        taps: usize,
    },
    /// A median, percentile or rank on the host's threads, in the mapped buffers of a CPU device: a sorted window
    /// sliding along x for a box, a selection per output for other footprints.
    Host {
        /// Values per window.
        taps: usize,
    },
}

impl std::fmt::Display for RankStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RankStrategy::Nothing => write!(f, "none"),
            RankStrategy::Separable { passes } => write!(f, "box minimum/maximum, {passes} pass(es) along the axes"),
            RankStrategy::Network { taps, operations } => {
                write!(f, "selection network over {taps} values, {operations} min/max per element")
            }
            RankStrategy::Bisection { taps } => write!(f, "bisection over {taps} values per element"),
            RankStrategy::Structured { taps } => {
                write!(f, "minimum/maximum in scipy's tap order over {taps} values per element")
            }
            RankStrategy::Host { taps } => write!(f, "on the host's threads over {taps} values per element"),
        }
    }
}

/// A rank filter: each output element is the chosen rank of the input values under the window placed on it
/// (scipy.ndimage.median_filter, minimum_filter, maximum_filter, percentile_filter, rank_filter — same sizes,
/// footprints, origins and border modes), over the last 1–3 axes and batched over the others. Real data.
///
/// NaN and ±inf: the minimum and maximum (and grey morphology on them) give scipy's result element for element.
/// scipy's comparisons never let a NaN replace the running value, so where one comes out depends on scipy's
/// order: over a footprint that is not a box, or with a structure, the running value starts at the first tap in
/// row-major order (a NaN there stays); a box runs one axis at a time through Harter's deque, which a NaN
/// leaves only when it dies or a smaller value sweeps it out (a window starting at a NaN may be NaN, a window
/// after one may keep a value from before it). cliper runs the same loop over the taps, and reruns the deque on
/// the lines that hold a NaN. Other ranks (the median, percentiles) with a NaN in the window do not follow scipy,
/// whose quickselect leaves whatever its partition puts in the middle; ±inf are ordered values and match.
///
/// ```
/// use cliper::{ClApp, RankFilter, RankKind, RankParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[1, 7], &[1.0f32, 9.0, 2.0, 2.0, 8.0, 3.0, 0.0])?;
/// let m = RankFilter::apply(&x, RankParams::new(RankKind::Median).size(&[3]).rank(1))?;
/// assert_eq!(m.to_vec()?, vec![1.0, 2.0, 2.0, 2.0, 3.0, 3.0, 0.0]); // reflect: 1 1 9 … 3 0 0
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct RankFilter<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: RankParams,
    plan: Prepared<Plan<T>>,
}

/// One launch: a kernel from `source` into `target`, and for the box passes their line.
struct Pass<T: RealElement> {
    kernel: Kernel,
    source: XData<T>,
    target: XData<T>,
    line: Option<Line>,
    /// Two outputs per work-item along x (the network kernel for small windows).
    pair: bool,
    /// Source and target as [batch, z, y, x] views (set by `init` once the passes are known).
    view: PassView,
}

/// A box pass along one axis (0: z, 1: y, 2: x): `size` values starting `before` elements before each output,
/// by the kernel `how` names.
#[derive(Clone, Copy)]
struct Line {
    axis: i32,
    size: i32,
    before: i32,
    how: LineKernel,
}

/// Which kernel runs a box pass.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LineKernel {
    /// `rank_line`: every output reads its `size` values (small windows).
    Direct,
    /// `rank_line_block` over this many blocks of `size` outputs along the axis (y and z).
    Blocks(u64),
    /// `rank_row_local`: rows of x through local memory, ROW_TILE outputs per work-group.
    RowTiles,
    /// `rank_line_nan` after one of the others: scipy's deque rerun on the lines that hold a NaN.
    NanLines,
}

/// Outputs per work-group of `rank_row_local`.
const ROW_TILE: usize = 256;

/// Box windows from this size run in blocks (van Herk/Gil-Werman); smaller ones read each value per output.
const BLOCK_FROM: usize = 4;

struct Plan<T: RealElement> {
    passes: Vec<Pass<T>>,
    /// The bisection's (or the structured pass's) taps on the device.
    taps: Option<XData<f32>>,
    /// The structure's value per tap.
    values: Option<XData<T>>,
    ntaps: i32,
    r: i32,
    index: IndexType,
    strategy: RankStrategy,
    /// The filter on the host, with the regions it maps.
    host: Option<HostPass<T>>,
}

/// A rank filter on the host, with the regions it maps.
type HostPass<T> = (HostRank<T>, HostRegions);

/// The filter on the host when it applies — a median, percentile or rank (not a minimum or maximum, which have
/// their own passes; no structure), a CPU device unless the kernels are asked for, and a contiguous non-empty
/// output in a buffer of its own — with the mapped regions.
fn host_pass<T: RealElement>(
    input: &XData<T>,
    output: &XData<T>,
    window: &Window,
    params: &RankParams,
    cval: T,
) -> Option<HostPass<T>> {
    // Windows a selection network takes stay there: on PoCL (2 cores, 2048² f32 of random values) the networks
    // ran 3×3, 5×5 and 7×7 medians in 34, 148 and 328 ms, the sliding window in 151, 296 and 438 (its merges
    // branch on the data); above 49 values the kernels bisect, and the host leads by 10× (5×5×5 of 128³: 596 ms
    // against 6296).
    let applies = !params.kernels_only
        && window.taps.len() > network_max(output.app())
        && window.values.is_empty()
        && window.r > 0
        && window.r + 1 < window.taps.len();
    let regions = HostRegions::for_pass(input, output).filter(|_| applies)?;
    let (extents, strides) = array_view("RankFilter", input, window.rank).ok()?;
    let start = regions.input_start(input);
    let host = HostRank {
        n: [extents[1], extents[2], extents[3]],
        strides: [strides[1], strides[2], strides[3]],
        batch_starts: (0..extents[0]).map(|b| start + b * strides[0]).collect(),
        taps: window.taps.clone(),
        r: window.r,
        border: params.border,
        cval,
    };
    Some((host, regions))
}

impl<T: RealElement> RankFilter<T> {
    /// `output = rank filter of input`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: RankParams) -> RankFilter<T> {
        RankFilter { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, filters into it once and returns it.
    pub fn apply(input: &XData<T>, params: RankParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "RankFilter", &Self::output_shape(input.shape(), &params)?)?;
        RankFilter::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (after checking the window against it).
    ///
    /// ```
    /// use cliper::{RankFilter, RankKind, RankParams};
    /// assert_eq!(RankFilter::<f32>::output_shape(&[8, 9], &RankParams::new(RankKind::Median))?, vec![8, 9]);
    /// let e = RankFilter::<f32>::output_shape(&[8], &RankParams::new(RankKind::Median).size(&[3, 3]));
    /// assert!(e.unwrap_err().to_string().contains("input's 1 axes"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &RankParams) -> Result<Vec<usize>> {
        params.window(input.len())?;
        Ok(input.to_vec())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<RankStrategy> {
        self.plan.as_ref().map(|p| p.strategy)
    }
}

impl<T: RealElement> Process for RankFilter<T> {
    fn name(&self) -> &str {
        "RankFilter"
    }

    fn init(&mut self) -> Result<()> {
        let op = self.params.kind.name();
        let shape = self.input.shape().to_vec();
        if self.output.shape() != shape.as_slice() {
            return Err(Error::shape_because(op, &shape, self.output.shape(), "the input's shape"));
        }
        if self.output.overlaps(&self.input) {
            return Err(Error::invalid(op, "the output overlaps the input: a window reads neighbours already written"));
        }
        let window = self.params.window(shape.len())?;
        let app = self.input.app().clone();
        let count = shape.iter().product::<usize>() as u64;
        let index = index_type_for(&[self.input.layout(), self.output.layout()], &[count]);
        let options = format!("{} -DIDX={} {}", T::build_options(), index.cl_type(), self.params.border.build_option());
        let source = kernels::with_common(kernels::RANK);
        let mut values = None;
        let cval = T::from_c64(Complex64::new(self.params.border.value(), 0.0));
        let host = if count == 0 { None } else { host_pass(&self.input, &self.output, &window, &self.params, cval) };
        let (mut passes, taps, strategy) = if count == 0 {
            (Vec::new(), None, RankStrategy::Nothing)
        } else if !window.values.is_empty() || (!window.full && (window.r == 0 || window.r + 1 == window.taps.len())) {
            // A structure, or the minimum or maximum of a footprint that is not a box: one loop over the taps in
            // scipy's order, which is what decides where a NaN comes out (rank.cl, rank_structured).
            let max = u8::from(window.r > 0 || self.params.kind == RankKind::Maximum);
            let flat = u8::from(window.values.is_empty());
            let program = app.build_program(
                "rank.cl",
                &source,
                &format!("{options} -DRANK_STRUCTURED -DOP_MAX={max} -DRANK_FLAT={flat}"),
            )?;
            // A flat footprint's kernel does not read its values; the argument still needs a buffer.
            let v: Vec<T> = if window.values.is_empty() {
                vec![T::from_c64(Complex64::new(0.0, 0.0))]
            } else {
                window.values.iter().map(|&v| T::from_c64(Complex64::new(v, 0.0))).collect()
            };
            values = Some(XData::from_slice(&app, &[v.len()], &v)?);
            let pass = Pass {
                kernel: program.kernel("rank_structured")?.owned_by(op),
                source: self.input.clone(),
                target: self.output.clone(),
                line: None,
                pair: false,
                view: PassView::default(),
            };
            (vec![pass], Some(window.taps_on(&app)?), RankStrategy::Structured { taps: window.taps.len() })
        } else if window.full && (window.r == 0 || window.r + 1 == window.taps.len()) {
            // A box minimum or maximum (a rank 0 or n − 1 of a box is one): one pass per axis.
            let max = u8::from(window.r > 0);
            let program = app.build_program("rank.cl", &source, &format!("{options} -DOP_MAX={max}"))?;
            let lines: Vec<(usize, usize, isize)> = (0..window.rank)
                .filter_map(|k| {
                    let (s, b) = (*window.shape.get(k)?, *window.before.get(k)?);
                    (s > 1).then_some((3 - window.rank + k, s, b))
                })
                .collect();
            let lines = if lines.is_empty() { vec![(2, 1, 0)] } else { lines };
            let mut passes = Vec::with_capacity(lines.len());
            let mut source_array = self.input.clone();
            for (k, &(axis, size, before)) in lines.iter().enumerate() {
                let target = if k + 1 == lines.len() { self.output.clone() } else { XData::uninit(&app, op, &shape)? };
                let extent = view4(&shape, self.input.strides(), window.rank)
                    .and_then(|(e, _)| e.get(axis + 1).copied())
                    .unwrap_or(1);
                // Along x, rows through local memory (coalesced reads); along y and z, blocks of outputs per
                // work-item, whose neighbours along x read neighbouring addresses. Measured on the H100, a 15×15
                // minimum of 8192² f32: 1.78 ms with rank_line on both axes, 1.01 with blocks on both, 0.68 so.
                let (kernel, how) = if axis == 2 && size >= 2 {
                    let rows = app.build_program(
                        "rank.cl",
                        &source,
                        &format!("{options} -DOP_MAX={max} -DROW_TILE={ROW_TILE}"),
                    )?;
                    (rows.kernel("rank_row_local")?, LineKernel::RowTiles)
                } else if size >= BLOCK_FROM {
                    let block =
                        app.build_program("rank.cl", &source, &format!("{options} -DOP_MAX={max} -DLINE_SIZE={size}"))?;
                    (block.kernel("rank_line_block")?, LineKernel::Blocks(extent.div_ceil(size) as u64))
                } else {
                    (program.kernel("rank_line")?, LineKernel::Direct)
                };
                passes.push(Pass {
                    kernel: kernel.owned_by(op),
                    source: source_array.clone(),
                    target: target.clone(),
                    line: Some(Line { axis: axis as i32, size: size as i32, before: before as i32, how }),
                    pair: false,
                    view: PassView::default(),
                });
                // Where a NaN is under a line's windows, scipy's result depends on its sequential deque: rerun it
                // there (the kernel returns after one scan of the lines without a NaN).
                let ring =
                    app.build_program("rank.cl", &source, &format!("{options} -DOP_MAX={max} -DSCIPY_RING={size}"))?;
                let how = LineKernel::NanLines;
                passes.push(Pass {
                    kernel: ring.kernel("rank_line_nan")?.owned_by(op),
                    source: source_array.clone(),
                    target: target.clone(),
                    line: Some(Line { axis: axis as i32, size: size as i32, before: before as i32, how }),
                    pair: false,
                    view: PassView::default(),
                });
                source_array = target;
            }
            let strategy = RankStrategy::Separable { passes: lines.len() };
            (passes, None, strategy)
        } else if host.is_some() {
            (Vec::new(), None, RankStrategy::Host { taps: window.taps.len() })
        } else if window.taps.len() <= network_max(&app) {
            let pair = window.taps.len() <= PAIR_MAX;
            let (text, operations) = network_kernel(&window, pair);
            let program = app.build_program("rank network", &format!("{source}\n{text}"), &options)?;
            let pass = Pass {
                kernel: program.kernel("rank_network")?.owned_by(op),
                source: self.input.clone(),
                target: self.output.clone(),
                line: None,
                pair,
                view: PassView::default(),
            };
            (vec![pass], None, RankStrategy::Network { taps: window.taps.len(), operations })
        } else {
            let program = app.build_program("rank.cl", &source, &format!("{options} -DRANK_BISECT"))?;
            let taps = window.taps_on(&app)?;
            let pass = Pass {
                kernel: program.kernel("rank_bisect")?.owned_by(op),
                source: self.input.clone(),
                target: self.output.clone(),
                line: None,
                pair: false,
                view: PassView::default(),
            };
            (vec![pass], Some(taps), RankStrategy::Bisection { taps: window.taps.len() })
        };
        for p in &mut passes {
            p.view = pass_view(op, &p.source, &p.target, window.rank)?;
        }
        self.plan.set(Plan {
            passes,
            taps,
            values,
            ntaps: window.taps.len() as i32,
            r: window.r as i32,
            index,
            strategy,
            host,
        });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let cval = T::from_c64(Complex64::new(self.params.border.value(), 0.0));
        let plan = self.plan.get("RankFilter")?;
        if let Some((host, regions)) = &plan.host {
            let (input, output) = (&self.input, &self.output);
            let bytes = 2 * output.len() as u64 * std::mem::size_of::<T>() as u64;
            let owner = self.params.kind.name();
            return regions.run(owner, "host_rank", input, output, (bytes, 0), true, |x, y| host.run(x, y));
        }
        let idx = plan.index;
        let (ntaps, r) = (plan.ntaps, plan.r);
        for pass in &mut plan.passes {
            let PassView { extents: e, source: sx, target: sy } = pass.view;
            let count: u64 = e.iter().map(|&n| n as u64).product();
            let items = match pass.line {
                Some(Line { axis, how: LineKernel::Blocks(blocks), .. }) => {
                    count / e.get(axis as usize + 1).map_or(1, |&n| n.max(1) as u64) * blocks
                }
                Some(Line { axis, how: LineKernel::NanLines, .. }) => {
                    count / e.get(axis as usize + 1).map_or(1, |&n| n.max(1) as u64)
                }
                _ if pass.pair => count / e[3].max(1) as u64 * e[3].div_ceil(2) as u64,
                _ => count,
            };
            let groups = (items as usize).div_ceil(GROUP).clamp(1, MAX_GROUPS);
            // RANK_ARGS in rank.cl: the source and target views, then the element count and the z, y, x extents.
            let mut l = pass.kernel.launch().input("x", &pass.source).index("x0", idx, pass.source.offset() as u64);
            l = indices(l, idx, X_STRIDES, &sx);
            l = l.output("y", &pass.target).index("y0", idx, pass.target.offset() as u64);
            l = indices(l, idx, Y_STRIDES, &sy);
            l = indices(l.index("count", idx, count), idx, ["nz", "ny", "nx"], &e[1..]);
            if let Some(Line { size, before, how: LineKernel::RowTiles, .. }) = pass.line {
                let rows = count / (e[3].max(1) as u64);
                l.scalar("size", size)
                    .scalar("before", before)
                    .scalar("cval", cval)
                    .local_memory("tile", (ROW_TILE + size as usize - 1) * std::mem::size_of::<T>())
                    .global(&[e[3].div_ceil(ROW_TILE) * ROW_TILE, rows as usize])
                    .local(&[ROW_TILE, 1])
                    .work(count * 2 * std::mem::size_of::<T>() as u64, 0)
                    .enqueue()?;
                continue;
            }
            l = match (pass.line, &plan.taps) {
                (Some(Line { axis, before, how: LineKernel::Blocks(blocks), .. }), _) => {
                    l.scalar("axis", axis).scalar("before", before).scalar("cval", cval).index("nblocks", idx, blocks)
                }
                (Some(Line { axis, before, how: LineKernel::NanLines, .. }), _) => {
                    l.scalar("axis", axis).scalar("before", before).scalar("cval", cval)
                }
                (Some(Line { axis, size, before, .. }), _) => {
                    l.scalar("axis", axis).scalar("size", size).scalar("before", before).scalar("cval", cval)
                }
                (None, Some(taps)) => match &plan.values {
                    Some(values) => {
                        l.input("taps", taps).input("values", values).scalar("ntaps", ntaps).scalar("cval", cval)
                    }
                    None => l.input("taps", taps).scalar("ntaps", ntaps).scalar("r", r).scalar("cval", cval),
                },
                (None, None) => l.scalar("cval", cval),
            };
            l.global(&[groups * GROUP])
                .local(&[GROUP])
                .work(count * 2 * std::mem::size_of::<T>() as u64, 0)
                .enqueue()?;
        }
        Ok(())
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// Windows up to this many taps run two neighbouring outputs (along x) per work-item: they share most of their
/// loads (12 instead of 18 for two 3×3 windows) and the index arithmetic; larger networks are compute-bound and
/// would double their registers.
const PAIR_MAX: usize = 25;

/// The `rank_network` kernel for `window`: the taps loaded through the border rule (each distinct coordinate
/// computed once), the selection network, the chosen value stored — for one output per work-item, or for two
/// neighbours along x (`pair`). Returns the source and the min/max count per output.
fn network_kernel(window: &Window, pair: bool) -> (String, usize) {
    let steps = network::selection(window.taps.len(), window.r);
    let operations = steps.iter().map(|s| if matches!(s, network::Step::Exchange(..)) { 2 } else { 1 }).sum();
    let name = |axis: &str, d: isize| format!("{axis}{}{}", if d < 0 { "m" } else { "p" }, d.unsigned_abs());
    let mut text = String::from("kernel void rank_network(RANK_ARGS, T cval) {\n");
    if pair {
        // Work-item b: the outputs at x = 2·(b mod ⌈nx/2⌉) and the next one.
        text.push_str(
            "  const IDX nxp = (nx + 1) / 2;\n  const IDX pairs = count / nx * nxp;\n\
             for (IDX b = get_global_id(0); b < pairs; b += get_global_size(0)) {\n\
             IDX rc_t_ = b;\n    const int cx = 2 * (int)(rc_t_ % nxp);\n    rc_t_ /= nxp;\n\
             const int cy = (int)(rc_t_ % ny);\n    rc_t_ /= ny;\n    const int cz = (int)(rc_t_ % nz);\n\
             const IDX w = rc_t_ / nz;\n    const IDX base = x0 + w * xsw;\n",
        );
    } else {
        text.push_str(
            "  for (IDX b = get_global_id(0); b < count; b += get_global_size(0)) {\n    RANK_COORDINATES(b);\n",
        );
    }
    let shifted = |t: &[isize; 3]| [t[0], t[1], t[2] + 1];
    let mut all: Vec<[isize; 3]> = window.taps.clone();
    if pair {
        all.extend(window.taps.iter().map(shifted));
    }
    for (k, (axis, c, n)) in [("z", "cz", "nz"), ("y", "cy", "ny"), ("x", "cx", "nx")].iter().enumerate() {
        let distinct: BTreeSet<isize> = all.iter().filter_map(|t| t.get(k).copied()).collect();
        for d in distinct {
            let _ = writeln!(text, "    const int {} = border_index({c} + ({d}), (int){n});", name(axis, d));
        }
    }
    // Each distinct tap loaded once, then copied into each network's variables.
    let load = |t: &[isize; 3]| format!("u_{}_{}_{}", name("z", t[0]), name("y", t[1]), name("x", t[2]));
    let distinct: BTreeSet<[isize; 3]> = all.iter().copied().collect();
    for t in &distinct {
        let _ = writeln!(
            text,
            "    const T {} = LOAD({}, {}, {});",
            load(t),
            name("z", t[0]),
            name("y", t[1]),
            name("x", t[2])
        );
    }
    for (i, t) in window.taps.iter().enumerate() {
        let _ = writeln!(text, "    T v{i} = {};", load(t));
        if pair {
            let _ = writeln!(text, "    T s{i} = {};", load(&shifted(t)));
        }
    }
    text.push_str(&network::emit(&steps, "v"));
    let _ = writeln!(text, "    STORE(v{});", window.r);
    if pair {
        text.push_str(&network::emit(&steps, "s"));
        let _ = writeln!(
            text,
            "    if (cx + 1 < (int)nx) y[y0 + w * ysw + (IDX)cz * ysz + (IDX)cy * ysy + (IDX)(cx + 1) * ysx] = s{};",
            window.r
        );
    }
    text.push_str("  }\n}\n");
    (text, operations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_merge_leading_axes() {
        assert_eq!(view4(&[2, 3, 4, 5], &[60, 20, 5, 1], 2), Some(([6, 1, 4, 5], [20, 0, 5, 1])));
        assert_eq!(view4(&[4, 5], &[5, 1], 2), Some(([1, 1, 4, 5], [0, 0, 5, 1])));
        assert_eq!(view4(&[2, 3, 4, 5], &[1, 2, 6, 24], 2), None);
        assert_eq!(view4(&[7, 4, 5], &[20, 5, 1], 3), Some(([1, 7, 4, 5], [0, 20, 5, 1])));
    }
}
