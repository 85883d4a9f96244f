//! [`SplineFilter`]: scipy.ndimage.spline_filter and spline_filter1d — the B-spline coefficients of an array —
//! and the prefilter plan the other resampling processes run before interpolating with order > 1.

use super::mode::{InterpMode, poles};
use crate::app::{DeviceKind, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{EXTENTS, X_STRIDES, Y_STRIDES, array_view, index_type_for, indices};
use crate::process::{Prepared, Process};
use num_complex::Complex64;

/// Work-items per group and the most groups of a line pass (the kernel loops over the rest of the lines).
const GROUP: usize = 64;
const MAX_GROUPS: usize = 1 << 16;
/// Work-items per group of the convolution passes (one per output).
const FIR_GROUP: usize = 256;

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
/// assert_eq!(p.strategy().unwrap().method.passes(), 2);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplineStrategy {
    /// One pass per filtered axis, recursive or convolving (none for orders 0 and 1: a copy).
    pub method: PrefilterMethod,
}

impl std::fmt::Display for SplineStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.method)
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
    /// Convolve (else recurse).
    fir: bool,
}

/// How the B-spline coefficients are computed: how many axes by scipy's recursive filters (one work-item per
/// line: the fewest operations, for CPUs) and how many by a convolution with the recursions' impulse response,
/// cut where its tail is below a thousandth of the precision (every output in parallel: GPUs, where one work-item
/// per line leaves the device idle). The `reflect` and `nearest` boundaries of scipy's recursions are not exact on
/// lines shorter than about twice the filter's reach, so those lines recurse on every device.
///
/// ```
/// use cliper::PrefilterMethod;
/// let m = PrefilterMethod { recursive: 1, convolving: 2, taps: 35 };
/// assert_eq!((m.passes(), m.to_string().as_str()), (3, "2 convolution pass(es) of 35 taps, 1 recursive"));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PrefilterMethod {
    /// Axes filtered by the recursions.
    pub recursive: usize,
    /// Axes filtered by the convolution.
    pub convolving: usize,
    /// The convolution's length (0 without one).
    pub taps: usize,
}

impl PrefilterMethod {
    /// The passes run (one per filtered axis).
    pub fn passes(self) -> usize {
        self.recursive + self.convolving
    }
}

impl std::fmt::Display for PrefilterMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.convolving, self.recursive) {
            (0, 0) => write!(f, "no prefilter"),
            (0, r) => write!(f, "{r} recursive pass(es)"),
            (c, 0) => write!(f, "{c} convolution pass(es) of {} taps", self.taps),
            (c, r) => write!(f, "{c} convolution pass(es) of {} taps, {r} recursive", self.taps),
        }
    }
}

/// The symmetric impulse response (taps 0..=half) of the whole prefilter of `order`: per pole z,
/// −z·(1 − z)(1 − 1/z)/(1 − z²) · z^|k| (the causal and anticausal recursions with scipy's gain), convolved over
/// the poles, each cut where |z|^k falls below `tolerance`.
pub(crate) fn fir_taps(order: usize, tolerance: f64) -> Vec<f64> {
    let mut h = vec![1.0];
    for &z in poles(order) {
        let gain = (1.0 - z) * (1.0 - 1.0 / z);
        let scale = -z * gain / (1.0 - z * z);
        let reach = (tolerance.ln() / z.abs().ln()).ceil().max(1.0) as i64;
        let pole: Vec<f64> = (-reach..=reach).map(|k| scale * z.powi(k.abs() as i32)).collect();
        let mut next = vec![0.0; h.len() + pole.len() - 1];
        for (i, a) in h.iter().enumerate() {
            for (j, b) in pole.iter().enumerate() {
                if let Some(v) = next.get_mut(i + j) {
                    *v += a * b;
                }
            }
        }
        h = next;
    }
    let centre = h.len() / 2;
    h.into_iter().skip(centre).collect()
}

/// The spline prefilter over some axes of a block (the last `rank` axes of an array): the passes, the kernel and
/// the coefficient array they leave.
pub(crate) struct Prefilter<T: Element> {
    recursive: Option<Kernel>,
    convolving: Option<Kernel>,
    passes: Vec<LinePass<T>>,
    index: IndexType,
    pad_edge: bool,
    cval: T,
    init: i32,
    /// The FIR taps (0..=half) when the passes convolve.
    taps: Option<XData<T::Real>>,
    /// The B-spline coefficients (the input itself when nothing is filtered).
    pub(crate) coefficients: XData<T>,
}

impl<T: Element> Prefilter<T> {
    /// Plans the filter of `input`'s block axes `slots` (indices into [w, z, y, x], 1 to 3) of the last `rank`
    /// axes, with `pad` samples added per side of each filtered axis (scipy's prepadding for `nearest` and
    /// `grid-constant`), written to `last` when given (same shape as the result) or to new arrays. GPUs convolve
    /// (unless the result overwrites the input: a convolution reads neighbours another work-item may have
    /// written); other devices recurse.
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
        let in_place = last.is_some_and(|out| out.overlaps(input));
        let fir = input.app().device().kind == DeviceKind::Gpu && !in_place;
        Self::plan_as(op, input, rank, slots, order, mode, pad, cval, last, fir)
    }

    /// [`Prefilter::plan`] with the method chosen by the caller (`fir`: convolve).
    #[allow(clippy::too_many_arguments)]
    fn plan_as(
        op: &str,
        input: &XData<T>,
        rank: usize,
        slots: &[usize],
        order: usize,
        mode: InterpMode,
        pad: usize,
        cval: Complex64,
        last: Option<&XData<T>>,
        fir: bool,
    ) -> Result<Prefilter<T>> {
        let app = input.app().clone();
        let filtered: Vec<usize> = if order > 1 { slots.to_vec() } else { Vec::new() };
        let tolerance = 1e-3 * if std::mem::size_of::<T::Real>() == 4 { f32::EPSILON as f64 } else { f64::EPSILON };
        let h = fir_taps(order, tolerance);
        let reach = h.len().saturating_sub(1);
        let mut passes = Vec::new();
        let mut source = input.clone();
        for (k, &slot) in filtered.iter().enumerate() {
            let axis = input.ndim() + slot - 4;
            let mut shape = source.shape().to_vec();
            if let Some(n) = shape.get_mut(axis) {
                *n += 2 * pad;
            }
            let m = shape.get(axis).copied().unwrap_or(1);
            let pass_fir = fir && !(mode.filter_init() == 1 && m < 2 * reach + 1);
            let last_pass = k + 1 == filtered.len();
            let target = match last {
                Some(out) if last_pass => out.clone(),
                // The recursions without padding write the final array on every pass (the passes after the
                // first filter it in place: a work-item reads each sample of its line before writing it).
                Some(out) if pad == 0 && !fir => out.clone(),
                _ if pad == 0 && k > 0 && !fir => source.clone(),
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
                fir: pass_fir,
            });
            source = target;
        }
        let coefficients = source;
        let mut layouts: Vec<_> = passes.iter().flat_map(|p| [p.source.layout(), p.target.layout()]).collect();
        let counts: Vec<u64> = passes.iter().map(|p| p.target.len() as u64).collect();
        let convolving = passes.iter().filter(|p| p.fir).count();
        let taps = if convolving > 0 {
            let h: Vec<T::Real> = h.iter().map(|&v| <T::Real as Element>::from_c64(Complex64::new(v, 0.0))).collect();
            Some(XData::from_slice(&app, &[h.len()], &h)?)
        } else {
            None
        };
        if let Some(t) = &taps {
            layouts.push(t.layout());
        }
        let index = index_type_for(&layouts, &counts);
        let (mut recursive, mut convolving_kernel) = (None, None);
        if !passes.is_empty() {
            // The same options as the separable passes' (interp_plan.rs), so that both share one program.
            let options = format!("{} -DIDX={} -DORDER={order}", T::build_options(), index.cl_type());
            let program = app.build_program("resample.cl", &kernels::with_common(kernels::RESAMPLE), &options)?;
            if convolving < passes.len() {
                recursive = Some(program.kernel("spline_prefilter")?.owned_by(op));
            }
            if convolving > 0 {
                convolving_kernel = Some(program.kernel("spline_fir")?.owned_by(op));
            }
        }
        Ok(Prefilter {
            recursive,
            convolving: convolving_kernel,
            passes,
            index,
            pad_edge: mode == InterpMode::Nearest,
            cval: T::from_c64(cval),
            init: mode.filter_init(),
            taps,
            coefficients,
        })
    }

    /// What the passes do.
    pub(crate) fn method(&self) -> PrefilterMethod {
        let convolving = self.passes.iter().filter(|p| p.fir).count();
        PrefilterMethod {
            recursive: self.passes.len() - convolving,
            convolving,
            taps: self.taps.as_ref().map_or(0, |t| 2 * t.len() - 1),
        }
    }

    /// Passes planned.
    pub(crate) fn passes(&self) -> usize {
        self.passes.len()
    }

    /// Enqueues the passes.
    pub(crate) fn launch(&mut self) -> Result<()> {
        let Prefilter { recursive, convolving, passes, index, pad_edge, cval, init, taps, .. } = self;
        let (idx, pad_edge, cval, init) = (*index, *pad_edge, *cval, *init);
        // The line extension the recursions assume, as the tap rule of the convolution.
        let extension = match init {
            1 => InterpMode::Reflect,
            2 => InterpMode::GridWrap,
            _ => InterpMode::Mirror,
        }
        .code();
        for pass in passes.iter() {
            let ((e, sx), (te, sy)) = (pass.source_view, pass.target_view);
            if e.contains(&0) {
                continue;
            }
            let n = e.get(pass.slot).copied().unwrap_or(1).max(1);
            let (kernel, taps) = match (pass.fir, recursive.as_mut(), convolving.as_mut(), taps.as_ref()) {
                (true, _, Some(k), Some(t)) => (k, Some(t)),
                (false, Some(k), _, _) => (k, None),
                _ => return Err(Error::invalid("spline prefilter", "a pass without its kernel")),
            };
            let mut l = kernel.launch().input("x", &pass.source).index("x0", idx, pass.source.offset() as u64);
            l = indices(l, idx, X_STRIDES, &sx);
            l = l.output("y", &pass.target).index("y0", idx, pass.target.offset() as u64);
            l = indices(l, idx, Y_STRIDES, &sy);
            match taps {
                Some(t) => {
                    let outputs = te.iter().product::<usize>();
                    l = indices(l, idx, EXTENTS, &te);
                    l.scalar("axis", pass.slot as i32 - 1)
                        .index("n", idx, n as u64)
                        .index("pad", idx, pass.pad as u64)
                        .scalar("pad_edge", i32::from(pad_edge))
                        .scalar("cval", cval)
                        .scalar("ext_mode", extension)
                        .input("taps", t)
                        .scalar("reach", (t.len() - 1) as i32)
                        .global(&[outputs.div_ceil(FIR_GROUP) * FIR_GROUP])
                        .local(&[FIR_GROUP])
                        .work((outputs * 2 * std::mem::size_of::<T>()) as u64, (outputs * 2 * t.len()) as u64)
                        .enqueue()?;
                }
                None => {
                    let lines = e.iter().product::<usize>() / n;
                    let groups = lines.div_ceil(GROUP).clamp(1, MAX_GROUPS);
                    l = indices(l, idx, EXTENTS, &e);
                    l.scalar("axis", pass.slot as i32 - 1)
                        .index("pad", idx, pass.pad as u64)
                        .scalar("pad_edge", i32::from(pad_edge))
                        .scalar("cval", cval)
                        .scalar("init", init)
                        .global(&[groups * GROUP])
                        .local(&[GROUP])
                        .work((e.iter().product::<usize>() * 6 * std::mem::size_of::<T>()) as u64, 0)
                        .enqueue()?;
                }
            }
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
        self.plan.as_ref().map(|p| SplineStrategy { method: p.prefilter.method() })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::ClApp;

    #[test]
    fn the_fir_taps_are_the_recursions_impulse_response() {
        // Cubic: √3 · z^|k| with z = √3 − 2; every order's taps add to one (a constant stays constant).
        let h = fir_taps(3, 1e-20);
        assert!((h[0] - 3f64.sqrt()).abs() < 1e-14 && (h[1] - 3f64.sqrt() * (3f64.sqrt() - 2.0)).abs() < 1e-14);
        for order in 2..=5 {
            let h = fir_taps(order, 1e-20);
            let sum = h[0] + 2.0 * h.iter().skip(1).sum::<f64>();
            assert!((sum - 1.0).abs() < 1e-13, "order {order}: {sum}");
        }
    }

    /// The convolution passes (GPUs) give the recursions' coefficients (CPUs) in every boundary, order and
    /// padding, on long and short axes (a 2-sample axis is extended over many periods): both are the exact
    /// filter of the extended line, so they agree to rounding — except scipy's reflect boundary on short lines,
    /// which is not exact there (8.8e-7 on 2 samples, order 2), so those lines recurse on every device.
    #[test]
    fn convolving_and_recursing_agree() {
        let app = ClApp::new().unwrap();
        let mut state = 7u64;
        let data: Vec<f64> = (0..3 * 160)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect();
        let x = XData::from_slice(&app, &[2, 11, 19], &data[..418]).unwrap();
        let short = XData::from_slice(&app, &[4, 2], &data[..8]).unwrap();
        // Lines longer than twice the longest reach (f64, order 5: 2 × 60 + 1): reflect convolves there too.
        let long = XData::from_slice(&app, &[3, 160], &data).unwrap();
        for (input, rank) in [(&x, 2), (&short, 2), (&long, 2)] {
            for mode in [
                InterpMode::Mirror,
                InterpMode::Reflect,
                InterpMode::GridWrap,
                InterpMode::Nearest,
                InterpMode::GridConstant,
            ] {
                for order in [2, 3, 5] {
                    let pad = mode.prepad();
                    let run = |fir: bool| {
                        let cval = Complex64::new(0.3, 0.0);
                        let mut p = Prefilter::plan_as("test", input, rank, &[2, 3], order, mode, pad, cval, None, fir)
                            .unwrap();
                        p.launch().unwrap();
                        p.coefficients.to_vec().unwrap()
                    };
                    let (a, b) = (run(false), run(true));
                    let worst = a.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0f64, f64::max);
                    assert!(worst < 1e-12, "{mode:?} order {order} shape {:?}: {worst:e}", input.shape());
                }
            }
        }
    }
}
