//! [`GenericFilter`]: scipy.ndimage.generic_filter with one of numpy's reductions as the function — the sum,
//! product, mean, variance, standard deviation, minimum, maximum, peak-to-peak or median of the values under a
//! window (a size or a footprint, scipy's border modes and origins), one work-item per output element looping over
//! the window's taps (`window_reduce` in `kernels/rank.cl`). scipy calls a Python function on every window; these
//! reductions are what it is called with most, and numpy's rules for them hold here: NaN propagates through the
//! minimum, maximum and median, the variance is centred (ddof 0), an even window's median averages the two middle
//! values.

use super::params::{Footprint, RankKind, RankParams};
use super::rank_filter::RankFilter;
use crate::app::Kernel;
use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::filter::Border;
use crate::process::planning::{PassView, X_STRIDES, Y_STRIDES, index_type_for, indices, pass_view};
use crate::process::{Prepared, Process};
use num_complex::Complex64;

/// Work-items per group, and the most groups one launch uses (the kernel loops over the rest).
const GROUP: usize = 256;
/// `window_reduce`'s pass that writes NaN where a window holds one (after median_filter's selection).
const REDUCE_NAN_WINDOWS: usize = 9;
const MAX_GROUPS: usize = 1 << 16;

/// The reduction a [`GenericFilter`] applies to each window: numpy's function of that name.
///
/// ```
/// use cliper::WindowFunction;
/// assert_eq!("std".parse::<WindowFunction>()?, WindowFunction::Std);
/// assert_eq!("amax".parse::<WindowFunction>()?, WindowFunction::Max);
/// assert_eq!(WindowFunction::Ptp.name(), "ptp");
/// assert!("mode".parse::<WindowFunction>().is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowFunction {
    /// numpy.sum.
    Sum,
    /// numpy.prod.
    Prod,
    /// numpy.mean.
    Mean,
    /// numpy.var (ddof 0).
    Var,
    /// numpy.std (ddof 0).
    Std,
    /// numpy.min (NaN if the window holds one).
    Min,
    /// numpy.max (NaN if the window holds one).
    Max,
    /// numpy.ptp: maximum − minimum.
    Ptp,
    /// numpy.median (the mean of the two middle values for an even window; NaN if the window holds one).
    Median,
}

impl WindowFunction {
    /// Every function, in the kernel's order (its `REDUCE_*` codes).
    pub const ALL: [WindowFunction; 9] = [
        WindowFunction::Sum,
        WindowFunction::Prod,
        WindowFunction::Mean,
        WindowFunction::Var,
        WindowFunction::Std,
        WindowFunction::Min,
        WindowFunction::Max,
        WindowFunction::Ptp,
        WindowFunction::Median,
    ];

    /// numpy's name.
    pub fn name(self) -> &'static str {
        match self {
            WindowFunction::Sum => "sum",
            WindowFunction::Prod => "prod",
            WindowFunction::Mean => "mean",
            WindowFunction::Var => "var",
            WindowFunction::Std => "std",
            WindowFunction::Min => "min",
            WindowFunction::Max => "max",
            WindowFunction::Ptp => "ptp",
            WindowFunction::Median => "median",
        }
    }

    /// The kernel's `WINDOW_REDUCE` code.
    fn code(self) -> usize {
        WindowFunction::ALL.iter().position(|&f| f == self).unwrap_or(0)
    }
}

impl std::str::FromStr for WindowFunction {
    type Err = Error;
    /// numpy's name (`sum`, `prod`, `mean`, `var`, `std`, `min`, `max`, `ptp`, `median`; `amin`, `amax`,
    /// `product`, `average` — the mean without weights — and `minimum`, `maximum` too).
    fn from_str(name: &str) -> Result<WindowFunction> {
        let t = name.trim().to_ascii_lowercase();
        let alias = match t.as_str() {
            "amin" | "minimum" => "min",
            "amax" | "maximum" => "max",
            "product" => "prod",
            "average" => "mean",
            other => other,
        };
        WindowFunction::ALL.into_iter().find(|f| f.name() == alias).ok_or_else(|| {
            Error::invalid(
                "generic_filter",
                format!("`{name}` is not a window function: give sum, prod, mean, var, std, min, max, ptp or median"),
            )
        })
    }
}

/// The settings of a [`GenericFilter`]: the function and its window — a [`RankParams`]'s size or footprint,
/// border, origin and axes (its kind is ignored).
///
/// ```
/// use cliper::{Border, GenericParams, WindowFunction};
/// let p = GenericParams::new(WindowFunction::Std).size(&[5]).border(Border::Nearest);
/// assert_eq!((p.function, p.window.size.as_slice()), (WindowFunction::Std, &[5usize][..]));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GenericParams {
    /// The reduction.
    pub function: WindowFunction,
    /// The window and border.
    pub window: RankParams,
}

impl GenericParams {
    /// `function` over a 3-wide box, border `reflect`, origin 0.
    pub fn new(function: WindowFunction) -> GenericParams {
        GenericParams { function, window: RankParams::new(RankKind::Minimum) }
    }
    /// Sets the box's size (one, or one per axis).
    pub fn size(mut self, size: &[usize]) -> GenericParams {
        self.window = self.window.size(size);
        self
    }
    /// Sets the footprint.
    pub fn footprint(mut self, footprint: Footprint) -> GenericParams {
        self.window = self.window.footprint(footprint);
        self
    }
    /// Sets the border rule.
    pub fn border(mut self, border: Border) -> GenericParams {
        self.window = self.window.border(border);
        self
    }
    /// Sets the origin (one, or one per axis).
    pub fn origin(mut self, origin: &[isize]) -> GenericParams {
        self.window = self.window.origin(origin);
        self
    }
    /// Sets the axes spanned (the last `rank`).
    pub fn rank(mut self, rank: usize) -> GenericParams {
        self.window = self.window.rank(rank);
        self
    }
}

/// How a [`GenericFilter`] runs, as its `strategy()` reports it.
///
/// ```
/// use cliper::{ClApp, GenericFilter, GenericParams, GenericStrategy, Process, WindowFunction, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[20, 30])?;
/// let y = XData::<f32>::zeros(&app, &[20, 30])?;
/// let mut p = GenericFilter::new(&x, &y, GenericParams::new(WindowFunction::Var).size(&[5]));
/// p.init()?;
/// assert_eq!(p.strategy(), Some(GenericStrategy::Taps { function: WindowFunction::Var, taps: 25 }));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenericStrategy {
    /// Nothing to compute (an empty array).
    Nothing,
    /// One work-item per element over every tap of the window.
    Taps {
        /// The reduction.
        function: WindowFunction,
        /// Values per window.
        taps: usize,
    },
    /// The median of an odd window: median_filter's selection (the same middle value), then a pass writing NaN
    /// where the window holds one, as numpy's median does (docs/benchmarks.md: an H200's 4096² 5×5 median).
    MedianFilterThenNan {
        /// Values per window.
        taps: usize,
    },
}

impl std::fmt::Display for GenericStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenericStrategy::Nothing => write!(f, "none"),
            GenericStrategy::Taps { function, taps } => {
                write!(f, "numpy.{} over the {taps} values of each element's window", function.name())
            }
            GenericStrategy::MedianFilterThenNan { taps } => {
                write!(f, "median_filter's middle of the {taps} values, then NaN where a window holds one")
            }
        }
    }
}

/// scipy.ndimage.generic_filter(input, numpy.FUNCTION, size | footprint, mode, cval, origin) over the last 1–3
/// axes, batched over the others. Real data; the result has the input's type, as scipy's (computed in the input's
/// precision: scipy computes in float64 and casts, so float32 results differ from it by rounding).
///
/// ```
/// use cliper::{ClApp, GenericFilter, GenericParams, WindowFunction, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[6], &[1.0f64, 9.0, 2.0, 2.0, 8.0, 4.0])?;
/// let m = GenericFilter::apply(&x, GenericParams::new(WindowFunction::Median).size(&[4]))?;
/// // scipy.ndimage.generic_filter(x, np.median, size=4): each window starts two before (reflect: 9 1 | 1 9 2 …),
/// // and an even window's median averages its middle pair — the first window 9 1 1 9 gives 5.
/// assert_eq!(m.to_vec()?, vec![5.0, 1.5, 2.0, 5.0, 3.0, 4.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct GenericFilter<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: GenericParams,
    plan: Prepared<Plan<T>>,
}

struct Plan<T: RealElement> {
    /// `None` for an empty array.
    launch: Option<(Kernel, XData<f32>, PassView)>,
    /// The median of an odd window: median_filter first (the kernel above then writes the NaN windows).
    selection: Option<RankFilter<T>>,
    ntaps: i32,
    index: IndexType,
    strategy: GenericStrategy,
}

impl<T: RealElement> GenericFilter<T> {
    /// `output = generic_filter(input, function)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: GenericParams) -> GenericFilter<T> {
        GenericFilter { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, filters into it once and returns it.
    pub fn apply(input: &XData<T>, params: GenericParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "GenericFilter", &Self::output_shape(input.shape(), &params)?)?;
        GenericFilter::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (after checking the window against it).
    ///
    /// ```
    /// use cliper::{GenericFilter, GenericParams, WindowFunction};
    /// let p = GenericParams::new(WindowFunction::Sum).size(&[3, 3]);
    /// assert_eq!(GenericFilter::<f32>::output_shape(&[8, 9], &p)?, vec![8, 9]);
    /// assert!(GenericFilter::<f32>::output_shape(&[8], &p).unwrap_err().to_string().contains("generic_filter"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &GenericParams) -> Result<Vec<usize>> {
        params.window.window_of("generic_filter", input.len())?;
        Ok(input.to_vec())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<GenericStrategy> {
        self.plan.as_ref().map(|p| p.strategy)
    }
}

impl<T: RealElement> Process for GenericFilter<T> {
    fn name(&self) -> &str {
        "GenericFilter"
    }

    fn init(&mut self) -> Result<()> {
        let op = "generic_filter";
        let shape = self.input.shape().to_vec();
        if self.output.shape() != shape.as_slice() {
            return Err(Error::shape_because(op, &shape, self.output.shape(), "the input's shape"));
        }
        if self.output.overlaps(&self.input) {
            return Err(Error::invalid(op, "the output overlaps the input: a window reads neighbours already written"));
        }
        let window = self.params.window.window_of(op, shape.len())?;
        let app = self.input.app().clone();
        let count = shape.iter().product::<usize>() as u64;
        let index = index_type_for(&[self.input.layout(), self.output.layout()], &[count]);
        let function = self.params.function;
        let ntaps = window.taps.len();
        // An odd window's median is the middle value median_filter selects (its sorting networks, not a
        // bisection over the window per element); only the NaN windows differ, which the kernel's pass then sets.
        let selection = if count > 0 && function == WindowFunction::Median && ntaps % 2 == 1 {
            let mut params = self.params.window.clone();
            params.kind = RankKind::Median;
            let mut rank = RankFilter::new(&self.input, &self.output, params);
            rank.init()?;
            Some(rank)
        } else {
            None
        };
        let code = if selection.is_some() { REDUCE_NAN_WINDOWS } else { function.code() };
        let launch = if count == 0 {
            None
        } else {
            let options = format!(
                "{} -DIDX={} {} -DWINDOW_REDUCE={code}",
                T::build_options(),
                index.cl_type(),
                self.params.window.border.build_option(),
            );
            let program = app.build_program("rank.cl", &kernels::with_common(kernels::RANK), &options)?;
            let taps = window.taps_on(&app)?;
            let view = pass_view(op, &self.input, &self.output, window.rank)?;
            Some((program.kernel("window_reduce")?.owned_by(op), taps, view))
        };
        let strategy = match (&launch, &selection) {
            (None, _) => GenericStrategy::Nothing,
            (Some(_), Some(_)) => GenericStrategy::MedianFilterThenNan { taps: ntaps },
            (Some(_), None) => GenericStrategy::Taps { function, taps: ntaps },
        };
        self.plan.set(Plan { launch, selection, ntaps: ntaps as i32, index, strategy });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let cval = T::from_c64(Complex64::new(self.params.window.border.value(), 0.0));
        let plan = self.plan.get("GenericFilter")?;
        let (idx, ntaps) = (plan.index, plan.ntaps);
        if let Some(selection) = plan.selection.as_mut() {
            selection.launch()?;
        }
        let Some((kernel, taps, view)) = &mut plan.launch else { return Ok(()) };
        let PassView { extents: e, source: sx, target: sy } = *view;
        let count: u64 = e.iter().map(|&n| n as u64).product();
        let groups = (count as usize).div_ceil(GROUP).clamp(1, MAX_GROUPS);
        // RANK_ARGS in rank.cl: the source and target views, then the element count and the z, y, x extents.
        let mut l = kernel.launch().input("x", &self.input).index("x0", idx, self.input.offset() as u64);
        l = indices(l, idx, X_STRIDES, &sx);
        l = l.output("y", &self.output).index("y0", idx, self.output.offset() as u64);
        l = indices(l, idx, Y_STRIDES, &sy);
        l = indices(l.index("count", idx, count), idx, ["nz", "ny", "nx"], &e[1..]);
        let bytes = count * (ntaps as u64 + 1) * std::mem::size_of::<T>() as u64;
        l.input("taps", taps)
            .scalar("ntaps", ntaps)
            .scalar("cval", cval)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .work(bytes, count * ntaps as u64)
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
