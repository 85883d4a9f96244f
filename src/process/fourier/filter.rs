//! [`FourierFilter`]: a spectrum multiplied by a Gaussian's, a box's, an ellipsoid's or a shift's transfer function.

use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::elementwise::ElementwiseStrategy;
use crate::process::planning::{MAX_AXES, index_type_for};
use crate::process::{Prepared, Process};
use std::f64::consts::PI;

/// Which filter, each scipy.ndimage's function of that name; the per-axis values are its `sigma`, `size` or
/// `shift`.
///
/// ```
/// use cliper::{ClApp, FourierFilter, FourierKind, FourierParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[5], &[1.0f64; 5])?;
/// let g = FourierFilter::<f64, f64>::apply(&x, FourierParams::new(FourierKind::Gaussian, &[1.5]))?.to_vec()?;
/// let expected = |f: f64| (-2.0 * std::f64::consts::PI.powi(2) * 1.5f64.powi(2) * f * f).exp();
/// assert!((g[1] - expected(0.2)).abs() < 1e-12 && (g[4] - expected(-0.2)).abs() < 1e-12);
/// assert_eq!(FourierKind::Ellipsoid.scipy_name(), "fourier_ellipsoid");
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FourierKind {
    /// `fourier_gaussian`: exp(−2π²σ²f²) per axis, 0 where the exponent exceeds 50 (as scipy).
    Gaussian,
    /// `fourier_uniform`: sin(π·size·f)/(π·size·f) per axis (a box of that size); a size ≤ 0 keeps only the
    /// zero frequency, as scipy's.
    Uniform,
    /// `fourier_ellipsoid`: the transform of an ellipsoid (1-D box, 2-D ellipse, 3-D ellipsoid) with these
    /// diameters: sin(r)/r, 2·J1(r)/r or 3·(sin r − r·cos r)/r³ at r = π·|(size·f)|; at most three axes.
    Ellipsoid,
    /// `fourier_shift`: exp(−2πi·shift·f) per axis, a shift by that many elements; the result is complex.
    Shift,
}

impl FourierKind {
    /// scipy's function name, for messages.
    pub fn scipy_name(self) -> &'static str {
        match self {
            FourierKind::Gaussian => "fourier_gaussian",
            FourierKind::Uniform => "fourier_uniform",
            FourierKind::Ellipsoid => "fourier_ellipsoid",
            FourierKind::Shift => "fourier_shift",
        }
    }

    fn code(self) -> u32 {
        match self {
            FourierKind::Gaussian => 0,
            FourierKind::Uniform => 1,
            FourierKind::Ellipsoid => 2,
            FourierKind::Shift => 3,
        }
    }

    /// The kernel's per-axis constant for this filter's `value` on an axis whose frequencies refer to `length`.
    fn axis_constant(self, value: f64, length: f64) -> f64 {
        match self {
            FourierKind::Gaussian => 2.0 * PI * PI * value * value / (length * length),
            FourierKind::Uniform if value > 0.0 => PI * value / length,
            FourierKind::Uniform => 0.0,
            FourierKind::Ellipsoid => PI * value.abs() / length,
            FourierKind::Shift => -2.0 * PI * value / length,
        }
    }
}

/// The settings of a [`FourierFilter`]: the filter, its value per axis (one for every axis, or one per axis:
/// scipy's `sigma`, `size`, `shift`), and scipy's `n` and `axis`: when `real_length` is set the input is a real
/// transform along `axis`, whose indices are the frequencies 0, 1, … of a signal of that length; otherwise every
/// axis is a full transform (numpy.fft.fftfreq's order).
///
/// ```
/// use cliper::{FourierKind, FourierParams};
/// let p = FourierParams::new(FourierKind::Gaussian, &[2.0]).real(11, 1);
/// assert_eq!((p.real_length, p.axis), (Some(11), 1));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct FourierParams {
    /// The filter.
    pub kind: FourierKind,
    /// Its value along each axis (one value: every axis).
    pub values: Vec<f64>,
    /// The real signal's length along `axis` when the input is a real FFT along it (scipy's `n`; `None`: n = −1).
    pub real_length: Option<usize>,
    /// The axis of the real transform.
    pub axis: usize,
}

impl FourierParams {
    /// `kind` with `values` (one, or one per axis) over full transforms on every axis.
    pub fn new(kind: FourierKind, values: &[f64]) -> FourierParams {
        FourierParams { kind, values: values.to_vec(), real_length: None, axis: 0 }
    }

    /// The input is a real FFT of a signal of `length` along `axis` (scipy's `n` and `axis`).
    pub fn real(mut self, length: usize, axis: usize) -> FourierParams {
        self.real_length = Some(length);
        self.axis = axis;
        self
    }

    /// The value along each of `ndim` axes, checked.
    fn per_axis(&self, shape: &[usize]) -> Result<Vec<f64>> {
        let op = self.kind.scipy_name();
        let values = match self.values.len() {
            1 => self.values.iter().copied().cycle().take(shape.len()).collect(),
            n if n == shape.len() => self.values.clone(),
            n => {
                return Err(Error::invalid(
                    op,
                    format!("takes one value or one per axis; got {n} for shape {shape:?}"),
                ));
            }
        };
        if let Some(bad) = values.iter().find(|v| !v.is_finite()) {
            return Err(Error::invalid(op, format!("takes finite values, not {bad}")));
        }
        if self.real_length.is_some() && self.axis >= shape.len() {
            return Err(Error::axis(op, self.axis as isize, shape));
        }
        if self.real_length == Some(0) {
            return Err(Error::invalid(op, "n (the real signal's length) must be positive, or -1 for a full FFT"));
        }
        if self.kind == FourierKind::Ellipsoid && shape.len() > 3 {
            return Err(Error::invalid(op, format!("takes 1-D, 2-D and 3-D input, not shape {shape:?}")));
        }
        Ok(values)
    }
}

/// scipy.ndimage's Fourier filters on a spectrum `x` into `out` (same shape): every element multiplied by the
/// filter's transfer function at its frequency, computed in double precision and rounded once to the output's
/// type. The filters keep real data real and complex data complex (`out` of either precision); the shift's
/// output is complex (scipy: complex128 for real input). Strided views, up to eight axes longer than 1.
///
/// ```
/// use cliper::{ClApp, FourierFilter, FourierKind, FourierParams, Process, XData};
/// use num_complex::Complex64;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[1.0f64; 4])?;
/// let y = XData::<Complex64>::zeros(&app, &[4])?;
/// FourierFilter::new(&x, &y, FourierParams::new(FourierKind::Shift, &[1.0])).run()?;
/// let y = y.to_vec()?; // exp(−2πi·k/4) at k = 0, 1, −2, −1
/// assert!((y[1] - Complex64::new(0.0, -1.0)).norm() < 1e-12 && (y[3] - Complex64::new(0.0, 1.0)).norm() < 1e-12);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct FourierFilter<T: Element, O: Element> {
    x: XData<T>,
    out: XData<O>,
    params: FourierParams,
    plan: Prepared<Plan>,
}

struct Plan {
    kernel: Option<Kernel>,
    index: IndexType,
    nd: u32,
    shape: [u64; MAX_AXES],
    constants: [f64; MAX_AXES],
    halved: u32,
    sx: [u64; MAX_AXES],
    so: [u64; MAX_AXES],
    count: u64,
    groups: usize,
}

const GROUP: usize = 256;

impl<T: Element, O: Element> FourierFilter<T, O> {
    /// The filter `params` describe of `x` into `out` (same shape, not overlapping).
    pub fn new(x: &XData<T>, out: &XData<O>, params: FourierParams) -> FourierFilter<T, O> {
        FourierFilter { x: x.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output (of the element type `O`: real or complex as the filter gives, either precision),
    /// filters `x` into it once and returns it.
    ///
    /// ```
    /// use cliper::{ClApp, FourierFilter, FourierKind, FourierParams, XData};
    /// let app = ClApp::new()?;
    /// let x = XData::from_slice(&app, &[4], &[1.0f32; 4])?;
    /// let y = FourierFilter::<f32, f32>::apply(&x, FourierParams::new(FourierKind::Uniform, &[2.0]))?;
    /// // sinc(2·k/4) at the frequencies 0, 1/4, −1/2, −1/4
    /// let sinc = |t: f64| (std::f64::consts::PI * t).sin() / (std::f64::consts::PI * t);
    /// assert_eq!(y.to_vec()?[0], 1.0);
    /// assert!((y.to_vec()?[1] as f64 - sinc(0.5)).abs() < 1e-6);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn apply(x: &XData<T>, params: FourierParams) -> Result<XData<O>> {
        let out = XData::uninit(x.app(), params.kind.scipy_name(), &Self::output_shape(x.shape(), &params)?)?;
        FourierFilter::new(x, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's, after checking the values against it (one or one per axis, finite; the
    /// real transform's axis in range; the ellipsoid on 1 to 3 axes).
    pub fn output_shape(shape: &[usize], params: &FourierParams) -> Result<Vec<usize>> {
        params.per_axis(shape)?;
        Ok(shape.to_vec())
    }

    /// The element-wise product `init` planned (over the axes longer than 1); `None` before `init`.
    pub fn strategy(&self) -> Option<ElementwiseStrategy> {
        self.plan
            .as_ref()
            .map(|p| ElementwiseStrategy::one_kernel(p.kernel.is_some(), p.nd as usize, p.groups, GROUP, p.index))
    }

    /// Refuses an output type the filter cannot give: the filters keep real and complex apart, the shift is
    /// complex.
    fn check_types(&self) -> Result<()> {
        let op = self.params.kind.scipy_name();
        let fits = if self.params.kind == FourierKind::Shift { O::IS_COMPLEX } else { O::IS_COMPLEX == T::IS_COMPLEX };
        if fits {
            return Ok(());
        }
        Err(Error::Unsupported {
            what: format!(
                "{op} of {} data into {}: the result is {}",
                T::CL_TYPE,
                O::CL_TYPE,
                match self.params.kind {
                    FourierKind::Shift => "complex",
                    _ if T::IS_COMPLEX => "complex",
                    _ => "real",
                }
            ),
        })
    }
}

impl<T: Element, O: Element> Process for FourierFilter<T, O> {
    fn name(&self) -> &str {
        self.params.kind.scipy_name()
    }

    fn init(&mut self) -> Result<()> {
        let op = self.name().to_string();
        let (x, out) = (&self.x, &self.out);
        let shape = x.shape();
        if out.shape() != shape {
            return Err(Error::shape_because(op, shape, out.shape(), "the input's shape"));
        }
        self.check_types()?;
        let values = self.params.per_axis(shape)?;
        if out.overlaps(x) && !out.is_empty() {
            return Err(Error::Unsupported {
                what: format!("{op} in place: give an output that does not overlap the input"),
            });
        }
        let kind = self.params.kind;
        // (extent, constant, halved, input stride, output stride) of each axis longer than 1: an axis of one
        // element holds only the zero frequency, whose factor is 1 for every filter.
        let kept: Vec<(usize, f64, bool, usize, usize)> = shape
            .iter()
            .zip(&values)
            .zip(x.strides().iter().zip(out.strides()))
            .enumerate()
            .filter(|(_, ((extent, _), _))| **extent > 1)
            .map(|(k, ((&extent, &value), (&in_stride, &out_stride)))| {
                let halved = self.params.real_length.filter(|_| k == self.params.axis);
                let length = halved.unwrap_or(extent) as f64;
                (extent, kind.axis_constant(value, length), halved.is_some(), in_stride, out_stride)
            })
            .collect();
        if kept.len() > MAX_AXES {
            return Err(Error::Unsupported {
                what: format!("{op}: shape {shape:?} has {} axes longer than 1; at most {MAX_AXES}", kept.len()),
            });
        }
        let column = |pick: fn(&(usize, f64, bool, usize, usize)) -> usize, fill: u64| -> [u64; MAX_AXES] {
            std::array::from_fn(|slot| kept.get(slot).map_or(fill, |a| pick(a) as u64))
        };
        let mut plan = Plan {
            kernel: None,
            index: IndexType::U32,
            nd: kept.len() as u32,
            shape: column(|a| a.0, 1),
            constants: std::array::from_fn(|slot| kept.get(slot).map_or(0.0, |a| a.1)),
            halved: kept.iter().enumerate().filter(|(_, a)| a.2).map(|(slot, _)| 1u32 << slot).sum(),
            sx: column(|a| a.3, 0),
            so: column(|a| a.4, 0),
            count: out.len() as u64,
            groups: out.len().div_ceil(GROUP).clamp(1, 1 << 16),
        };
        plan.index = index_type_for(&[x.layout(), out.layout()], &[plan.count]);
        if plan.count > 0 {
            let options = format!(
                "{} -DIDX={} -DO={} -DOR={} -DO_COMPLEX={} -DFILTER={} -DRANK={}",
                T::build_options(),
                plan.index.cl_type(),
                O::CL_TYPE,
                <O::Real as Element>::CL_TYPE,
                u8::from(O::IS_COMPLEX),
                kind.code(),
                shape.len()
            );
            let program = x.app().build_program("fourier.cl", &kernels::with_common(kernels::FOURIER), &options)?;
            plan.kernel = Some(program.kernel("fourier_filter")?.owned_by(&op));
        }
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let name = self.params.kind.scipy_name();
        let plan = self.plan.get(name)?;
        let Some(kernel) = plan.kernel.as_mut() else { return Ok(()) };
        let (idx, groups) = (plan.index, plan.groups);
        kernel
            .launch()
            .input("x", &self.x)
            .index("x0", idx, self.x.offset() as u64)
            .output("out", &self.out)
            .index("o0", idx, self.out.offset() as u64)
            .scalar("nd", plan.nd)
            .scalar("shape", plan.shape)
            .scalar("param", plan.constants)
            .scalar("halved", plan.halved)
            .scalar("sx", plan.sx)
            .scalar("so", plan.so)
            .index("count", idx, plan.count)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .work(plan.count * (std::mem::size_of::<T>() + std::mem::size_of::<O>()) as u64, 0)
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
