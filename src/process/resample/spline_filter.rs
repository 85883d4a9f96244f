//! [`SplineFilter`]: scipy.ndimage.spline_filter and spline_filter1d — the B-spline coefficients of an array —
//! and the prefilter plan the other resampling processes run before interpolating with order > 1.

use super::mode::{InterpMode, poles};
use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{array_view, index_type_for};
use crate::process::{Prepared, Process};
use num_complex::Complex64;

/// Work-items per group and the most groups of a line pass (the kernel loops over the rest of the lines).
const GROUP: usize = 64;
const MAX_GROUPS: usize = 1 << 16;

/// The settings of a [`SplineFilter`]: the spline order (2 to 5; 0 and 1 copy, as scipy), the boundary mode
/// (scipy's default for spline_filter is `mirror`) and the axes: every axis (scipy's spline_filter, up to three),
/// the last `rank` ones ([`SplineParams::rank`]: a colour image's two image axes), or one
/// ([`SplineParams::axis`]: spline_filter1d).
///
/// ```
/// use cliper::{InterpMode, SplineParams};
/// let p = SplineParams::new(5).mode(InterpMode::GridWrap).axis(1);
/// assert_eq!((p.order, p.mode, p.axis), (5, InterpMode::GridWrap, Some(1)));
/// assert_eq!(SplineParams::default().mode, InterpMode::Mirror);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SplineParams {
    /// The spline order, 0 to 5.
    pub order: usize,
    /// The boundary the recursions assume.
    pub mode: InterpMode,
    /// One axis (spline_filter1d), or every axis.
    pub axis: Option<usize>,
    /// Only the last `rank` axes (when `axis` is not given).
    pub rank: Option<usize>,
}

impl Default for SplineParams {
    fn default() -> SplineParams {
        SplineParams { order: 3, mode: InterpMode::Mirror, axis: None, rank: None }
    }
}

impl SplineParams {
    /// Order `order`, mode `mirror`, every axis.
    pub fn new(order: usize) -> SplineParams {
        SplineParams { order, ..SplineParams::default() }
    }
    /// Sets the mode.
    pub fn mode(mut self, mode: InterpMode) -> SplineParams {
        self.mode = mode;
        self
    }
    /// Filters along one axis only.
    pub fn axis(mut self, axis: usize) -> SplineParams {
        self.axis = Some(axis);
        self
    }
    /// Filters the last `rank` axes only.
    pub fn rank(mut self, rank: usize) -> SplineParams {
        self.rank = Some(rank);
        self
    }
}

/// What a [`SplineFilter`] runs.
///
/// ```
/// use cliper::{ClApp, Process, SplineFilter, SplineParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[6, 7])?;
/// let mut p = SplineFilter::new(&x, &XData::zeros(&app, &[6, 7])?, SplineParams::new(3));
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().passes, 2);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplineStrategy {
    /// One recursive pass per filtered axis (0 for orders 0 and 1: a copy).
    pub passes: usize,
}

impl std::fmt::Display for SplineStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} recursive-filter pass(es), one work-item per line", self.passes)
    }
}

/// One axis of a prefilter: `source` → `target` along block slot `slot` (1 z, 2 y, 3 x of the [w, z, y, x]
/// view), padding `pad` samples on each side.
struct LinePass<T: Element> {
    source: XData<T>,
    target: XData<T>,
    slot: usize,
    pad: usize,
    source_view: ([usize; 4], [usize; 4]),
    target_view: ([usize; 4], [usize; 4]),
}

/// The spline prefilter over some axes of a block (the last `rank` axes of an array): the passes, the kernel and
/// the coefficient array they leave.
pub(crate) struct Prefilter<T: Element> {
    kernel: Option<Kernel>,
    passes: Vec<LinePass<T>>,
    index: IndexType,
    pad_edge: bool,
    cval: T,
    init: i32,
    /// The B-spline coefficients (the input itself when nothing is filtered).
    pub(crate) coefficients: XData<T>,
}

impl<T: Element> Prefilter<T> {
    /// Plans the filter of `input`'s block axes `slots` (indices into [w, z, y, x], 1 to 3) of the last `rank`
    /// axes, with `pad` samples added per side of each filtered axis (scipy's prepadding for `nearest` and
    /// `grid-constant`), written to `last` when given (same shape as the result) or to new arrays.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn plan(
        op: &str,
        input: &XData<T>,
        rank: usize,
        slots: &[usize],
        order: usize,
        mode: InterpMode,
        pad: usize,
        cval: Complex64,
        last: Option<&XData<T>>,
    ) -> Result<Prefilter<T>> {
        let app = input.app().clone();
        let mut passes = Vec::new();
        let mut source = input.clone();
        let filtered: Vec<usize> = if order > 1 { slots.to_vec() } else { Vec::new() };
        for (k, &slot) in filtered.iter().enumerate() {
            let axis = input.ndim() + slot - 4;
            let mut shape = source.shape().to_vec();
            if let Some(n) = shape.get_mut(axis) {
                *n += 2 * pad;
            }
            // Without padding, every pass writes the final array (the passes after the first filter it in
            // place: a work-item reads each sample of its line before writing it).
            let target = match last {
                Some(out) if pad == 0 || k + 1 == filtered.len() => out.clone(),
                _ if pad == 0 && k > 0 => source.clone(),
                _ => XData::<T>::uninit(&app, op, &shape)?,
            };
            if target.shape() != shape.as_slice() {
                return Err(Error::shape(op, &shape, target.shape()));
            }
            let source_view = array_view(op, &source, rank)?;
            let target_view = array_view(op, &target, rank)?;
            passes.push(LinePass {
                source: source.clone(),
                target: target.clone(),
                slot,
                pad,
                source_view,
                target_view,
            });
            source = target;
        }
        let coefficients = source;
        let layouts: Vec<_> = passes.iter().flat_map(|p| [p.source.layout(), p.target.layout()]).collect();
        let index = index_type_for(&layouts, &[]);
        let kernel = if passes.is_empty() {
            None
        } else {
            let options =
                format!("{} -DIDX={} -DORDER={order} -DMODE=0 -DTAP_MODE=0", T::build_options(), index.cl_type());
            let program = app.build_program("resample.cl", &kernels::with_common(kernels::RESAMPLE), &options)?;
            Some(program.kernel("spline_prefilter")?.owned_by(op))
        };
        debug_assert!(poles(order).len() <= 2);
        Ok(Prefilter {
            kernel,
            passes,
            index,
            pad_edge: mode == InterpMode::Nearest,
            cval: T::from_c64(cval),
            init: mode.filter_init(),
            coefficients,
        })
    }

    /// Passes planned.
    pub(crate) fn passes(&self) -> usize {
        self.passes.len()
    }

    /// Enqueues the passes.
    pub(crate) fn launch(&mut self) -> Result<()> {
        let Prefilter { kernel, passes, index, pad_edge, cval, init, .. } = self;
        let Some(kernel) = kernel.as_mut() else { return Ok(()) };
        let (idx, pad_edge, cval, init) = (*index, *pad_edge, *cval, *init);
        for pass in passes.iter() {
            let ((e, sx), (_, sy)) = (pass.source_view, pass.target_view);
            if e.contains(&0) {
                continue;
            }
            let n = e.get(pass.slot).copied().unwrap_or(1).max(1);
            let lines = e.iter().product::<usize>() / n;
            let groups = lines.div_ceil(GROUP).clamp(1, MAX_GROUPS);
            let mut l = kernel.launch().input(&pass.source).index(idx, pass.source.offset() as u64);
            for s in sx {
                l = l.index(idx, s as u64);
            }
            l = l.output(&pass.target).index(idx, pass.target.offset() as u64);
            for s in sy {
                l = l.index(idx, s as u64);
            }
            for extent in e {
                l = l.index(idx, extent as u64);
            }
            l.scalar(pass.slot as i32 - 1)
                .index(idx, pass.pad as u64)
                .scalar(i32::from(pad_edge))
                .scalar(cval)
                .scalar(init)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .work((e.iter().product::<usize>() * 6 * std::mem::size_of::<T>()) as u64, 0)
                .enqueue()?;
        }
        Ok(())
    }
}

/// B-spline coefficients of real or complex data (scipy.ndimage.spline_filter, or spline_filter1d with
/// [`SplineParams::axis`]): the recursive filters of Unser et al. with scipy's boundary initialisations per mode,
/// so that `map_coordinates(…, prefilter=False)` of the result interpolates the input. Computed in the element's
/// precision (scipy computes in float64): on float32 data the coefficients agree with scipy's to a few units in
/// the last place of the data's range. Spans up to the last three axes.
///
/// ```
/// use cliper::{ClApp, SplineFilter, SplineParams, XData};
/// let app = ClApp::new()?;
/// // A constant stays constant: the B-spline of constant coefficients is that constant.
/// let x = XData::from_slice(&app, &[2, 5], &[3.0f64; 10])?;
/// let c = SplineFilter::apply(&x, SplineParams::new(3))?.to_vec()?;
/// assert!(c.iter().all(|v| (v - 3.0).abs() < 1e-12));
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct SplineFilter<T: Element> {
    input: XData<T>,
    output: XData<T>,
    params: SplineParams,
    plan: Prepared<Plan<T>>,
}

struct Plan<T: Element> {
    prefilter: Prefilter<T>,
    copy: Option<crate::process::elementwise::Elementwise<T, T>>,
}

impl<T: Element> SplineFilter<T> {
    /// `output = spline_filter(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: SplineParams) -> SplineFilter<T> {
        SplineFilter { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: SplineParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "SplineFilter", &Self::output_shape(input.shape(), &params)?)?;
        SplineFilter::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (after checking the order and axis).
    ///
    /// ```
    /// use cliper::{SplineFilter, SplineParams};
    /// assert_eq!(SplineFilter::<f32>::output_shape(&[4, 5], &SplineParams::new(3))?, vec![4, 5]);
    /// assert!(SplineFilter::<f32>::output_shape(&[4, 5], &SplineParams::new(6)).is_err());
    /// assert!(SplineFilter::<f32>::output_shape(&[4, 5], &SplineParams::new(3).axis(2)).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &SplineParams) -> Result<Vec<usize>> {
        Self::axes(input.len(), params)?;
        Ok(input.to_vec())
    }

    /// The block rank and the block slots filtered.
    fn axes(ndim: usize, params: &SplineParams) -> Result<(usize, Vec<usize>)> {
        let op = "spline_filter";
        if params.order > 5 {
            return Err(Error::invalid(op, format!("spline order {} is not supported: use 0 to 5", params.order)));
        }
        match params.axis {
            Some(a) if a >= ndim => {
                Err(Error::invalid(op, format!("axis {a} is out of range for an input of {ndim} axes")))
            }
            Some(a) if ndim - a > 3 => Err(Error::Unsupported {
                what: format!(
                    "spline_filter1d along axis {a} of {ndim}: the filtered axis must be one of the last three"
                ),
            }),
            Some(a) => Ok((ndim - a, vec![4 - (ndim - a)])),
            None => {
                let rank = params.rank.unwrap_or(ndim);
                if rank > ndim {
                    return Err(Error::invalid(op, format!("the last {rank} axes of an input of {ndim}")));
                }
                if rank > 3 {
                    return Err(Error::Unsupported {
                        what: format!(
                            "spline_filter of {rank} axes: filter at most three (`rank`, or `axis` for one at a time)"
                        ),
                    });
                }
                Ok((rank, (4 - rank..4).collect()))
            }
        }
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<SplineStrategy> {
        self.plan.as_ref().map(|p| SplineStrategy { passes: p.prefilter.passes() })
    }
}

impl<T: Element> Process for SplineFilter<T> {
    fn name(&self) -> &str {
        "spline_filter"
    }

    fn init(&mut self) -> Result<()> {
        let shape = self.input.shape().to_vec();
        if self.output.shape() != shape.as_slice() {
            return Err(Error::shape(self.name(), &shape, self.output.shape()));
        }
        let (rank, slots) = Self::axes(shape.len(), &self.params)?;
        let p = &self.params;
        let prefilter = Prefilter::plan(
            self.name(),
            &self.input,
            rank,
            &slots,
            p.order,
            p.mode,
            0,
            Complex64::default(),
            Some(&self.output),
        )?;
        // Orders 0 and 1 (or an array without axes) leave the data as it is: copied.
        let copy = if prefilter.passes() == 0 {
            let mut c = crate::process::elementwise::Elementwise::new(
                &[&self.input],
                &self.output,
                crate::process::elementwise::Expr::input(0),
            );
            c.init()?;
            Some(c)
        } else {
            None
        };
        self.plan.set(Plan { prefilter, copy });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("spline_filter")?;
        if let Some(copy) = plan.copy.as_mut() {
            return copy.launch();
        }
        plan.prefilter.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
