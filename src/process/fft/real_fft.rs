//! [`RealFft`] and [`InverseRealFft`]: numpy's `rfftn` and `irfftn`, built on the complex [`Fft`].
//!
//! `RealFft` widens the real input to complex, transforms every chosen axis and keeps the first n/2 + 1
//! frequencies of the last one; `InverseRealFft` inverts the other axes first, extends the half spectrum of the
//! last axis by Hermitian symmetry (`hermitian_extend` in `kernels/fft.cl`), inverts it and keeps the real part —
//! which ignores the imaginary parts of the zero and Nyquist terms exactly as numpy does. Both move about twice
//! the data a dedicated real-to-complex kernel would (the complex intermediate is full size).

use super::axis_plan::{FftPart, fft_program};
use super::complex_fft::Fft;
use super::fft_params::{FftDirection, FftNorm, FftParams};
use super::fft_strategy::FftStrategy;
use crate::app::Kernel;
use crate::data::XData;
use crate::element::{ComplexElement, Element};
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::process::elementwise::{Complex2Real, ComplexPart};
use crate::process::elementwise::{EwOp, EwPlan};
use crate::process::layout::{CopyParams, StridedCopy};
use crate::process::{Prepared, Process};

/// The transformed axes, checked against a shape.
struct Transformed {
    /// Every transformed axis, in order.
    axes: Vec<usize>,
    /// The last of them: the halved axis.
    last: usize,
    /// Its extent in the shape checked.
    extent: usize,
}

impl Transformed {
    /// The axes before the last.
    fn others(&self) -> Vec<usize> {
        // Each axis appears once, so this drops exactly the last.
        self.axes.iter().copied().filter(|&a| a != self.last).collect()
    }
}

/// The transformed axes (default all) checked against `shape`; the last one is the halved axis.
fn transformed_axes(op: &str, axes: &Option<Vec<usize>>, shape: &[usize]) -> Result<Transformed> {
    let axes = axes.clone().unwrap_or_else(|| (0..shape.len()).collect());
    let mut last = None;
    for (i, &a) in axes.iter().enumerate() {
        let Some(&extent) = shape.get(a) else {
            return Err(Error::axis(op, a as isize, shape));
        };
        if axes.iter().take(i).any(|&b| b == a) {
            return Err(Error::invalid(op, format!("axis {a} is given twice in {axes:?}")));
        }
        last = Some((a, extent));
    }
    let Some((last, extent)) = last else {
        return Err(Error::invalid(op, "needs at least one axis to transform"));
    };
    Ok(Transformed { axes, last, extent })
}

/// The parameters of [`RealFft`] and [`InverseRealFft`]: the transformed axes (default all; the last listed
/// is the halved one), the normalisation (default numpy's `"backward"`) and the real length of the halved
/// axis (numpy `irfftn`'s `s[-1]`: [`InverseRealFft`]'s output length, default `2·(m − 1)` for a half spectrum
/// of `m`; [`RealFft`] checks it against its input when given).
///
/// ```
/// use cliper::{FftNorm, RealFftParams};
/// let p = RealFftParams::default().axes(&[0, 1]).norm(FftNorm::Ortho).length(255);
/// assert_eq!(p.length_of_last(), Some(255));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RealFftParams {
    axes: Option<Vec<usize>>,
    norm: FftNorm,
    length: Option<usize>,
}

impl RealFftParams {
    /// Transform only these axes; the last one listed is halved.
    pub fn axes(mut self, axes: &[usize]) -> RealFftParams {
        self.axes = Some(axes.to_vec());
        self
    }

    /// The normalisation (default [`FftNorm::Backward`]).
    pub fn norm(mut self, norm: FftNorm) -> RealFftParams {
        self.norm = norm;
        self
    }

    /// The real length of the halved axis (odd lengths need it for the inverse).
    pub fn length(mut self, n: usize) -> RealFftParams {
        self.length = Some(n);
        self
    }

    /// The real length of the halved axis, when given.
    pub fn length_of_last(&self) -> Option<usize> {
        self.length
    }

    /// The complex transform of `axes` with this normalisation, in `direction`.
    fn fft(&self, axes: &[usize], direction: FftDirection) -> FftParams {
        FftParams::new(direction).axes(axes).norm(self.norm)
    }
}

/// numpy's `rfftn(x, axes=axes, norm=norm)`: the FFT of real data, keeping the n/2 + 1 non-negative frequencies
/// of the last transformed axis (the others follow by Hermitian symmetry).
///
/// ```
/// use cliper::{ClApp, Process, RealFft, RealFftParams, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[1.0f32, 2.0, 3.0, 4.0])?;
/// let y = RealFft::<C>::apply(&x, RealFftParams::default())?; // shape [3]
/// // numpy.fft.rfft([1, 2, 3, 4]) = [10, -2+2j, -2]
/// let want = [C::new(10.0, 0.0), C::new(-2.0, 2.0), C::new(-2.0, 0.0)];
/// assert!(y.to_vec()?.iter().zip(want).all(|(a, b)| (a - b).norm() < 1e-5));
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct RealFft<T: ComplexElement> {
    input: XData<T::Real>,
    output: XData<T>,
    params: RealFftParams,
    plan: Prepared<RealPlan<T>>,
}

struct RealPlan<T: ComplexElement> {
    widen: EwPlan,
    wide: XData<T>,
    fft: Fft<T>,
    keep: StridedCopy<T>,
}

impl<T: ComplexElement> RealFft<T> {
    /// `rfftn` of `input` into `output` as `params` say.
    pub fn new(input: &XData<T::Real>, output: &XData<T>, params: RealFftParams) -> RealFft<T> {
        RealFft { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the half spectrum, transforms `input` into it once and returns it.
    pub fn apply(input: &XData<T::Real>, params: RealFftParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "RealFft", &Self::output_shape(input.shape(), &params)?)?;
        RealFft::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape for an input shape: the last transformed axis becomes n/2 + 1.
    ///
    /// ```
    /// use cliper::{RealFft, RealFftParams};
    /// use num_complex::Complex32;
    /// assert_eq!(RealFft::<Complex32>::output_shape(&[6, 7], &RealFftParams::default())?, vec![6, 4]);
    /// assert_eq!(RealFft::<Complex32>::output_shape(&[6, 7], &RealFftParams::default().axes(&[1, 0]))?, vec![4, 7]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &RealFftParams) -> Result<Vec<usize>> {
        let Transformed { last, extent, .. } = transformed_axes("RealFft", &params.axes, shape)?;
        if let Some(n) = params.length.filter(|&n| n != extent) {
            return Err(Error::invalid(
                "RealFft",
                format!("length {n} differs from the input's axis {last} of shape {shape:?}; pad or crop the input"),
            ));
        }
        Ok(shape.iter().enumerate().map(|(k, &n)| if k == last { extent / 2 + 1 } else { n }).collect())
    }

    /// How the complex transform runs; `None` before `init`.
    pub fn strategy(&self) -> Option<FftStrategy> {
        self.plan.as_ref().and_then(|p| p.fft.strategy())
    }
}

impl<T: ComplexElement> Process for RealFft<T> {
    fn name(&self) -> &str {
        "RealFft"
    }

    fn init(&mut self) -> Result<()> {
        let op = "RealFft";
        let shape = self.input.shape().to_vec();
        let Transformed { axes, last, extent } = transformed_axes(op, &self.params.axes, &shape)?;
        let expected = RealFft::<T>::output_shape(&shape, &self.params)?;
        if self.output.shape() != expected.as_slice() {
            let why = format!("the input {shape:?} with axis {last} halved");
            return Err(Error::shape_because(op, &expected, self.output.shape(), why));
        }
        let app = self.input.app();
        let wide = XData::<T>::uninit(app, op, &shape)?;
        let widen = EwPlan::new::<T::Real, T::Real, T>(op, EwOp::Widen, &self.input, None, &wide)?;
        let spectrum = XData::<T>::uninit(app, op, &shape)?;
        let mut fft = Fft::new(&wide, &spectrum, self.params.fft(&axes, FftDirection::Forward));
        fft.init()?;
        let mut keep =
            StridedCopy::new(&spectrum.slice_axis(last, ..extent / 2 + 1)?, &self.output, CopyParams::default());
        keep.init()?;
        self.plan.set(RealPlan { widen, wide, fft, keep });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("RealFft")?;
        let zero = <T::Real as Element>::from_c64(Default::default());
        plan.widen.launch(&self.input, &self.input, &plan.wide, zero)?;
        plan.fft.launch()?;
        plan.keep.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// numpy's `irfftn(x, s, axes=axes, norm=norm)`: real data back from the half spectrum `[… m]` of the last
/// transformed axis. The output's length along it (numpy's `s`) comes from the output array, or for
/// [`InverseRealFft::apply`] from [`RealFftParams::length`] (default `2·(m − 1)`), so odd lengths come back
/// too. Half spectra longer than needed are cropped and shorter ones zero-padded, as numpy does.
///
/// ```
/// use cliper::{ClApp, InverseRealFft, Process, RealFftParams, XData};
/// use num_complex::Complex64 as C;
/// let app = ClApp::new()?;
/// let half = XData::from_slice(&app, &[3], &[C::new(10.0, 0.0), C::new(-2.0, 2.0), C::new(-2.0, 0.0)])?;
/// let x = InverseRealFft::apply(&half, RealFftParams::default())?; // length 2·(3 − 1) = 4
/// assert!(x.to_vec()?.iter().zip([1.0, 2.0, 3.0, 4.0]).all(|(a, b)| (a - b).abs() < 1e-12));
/// let odd = XData::<f64>::zeros(&app, &[5])?;
/// InverseRealFft::new(&half, &odd, RealFftParams::default()).run()?; // numpy.fft.irfft(half, 5)
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct InverseRealFft<T: ComplexElement> {
    input: XData<T>,
    output: XData<T::Real>,
    params: RealFftParams,
    plan: Prepared<InversePlan<T>>,
}

/// The first step of the inverse: the complex inverse of the other axes, or a copy when there are none.
enum FirstStep<T: ComplexElement> {
    Copy(Box<StridedCopy<T>>),
    Fft(Box<Fft<T>>),
}

struct InversePlan<T: ComplexElement> {
    /// The inverse transform of the other axes (or a copy into contiguous scratch) into `half`.
    first: FirstStep<T>,
    half: XData<T>,
    extend: Kernel,
    full: XData<T>,
    index: IndexType,
    m: usize,
    n: usize,
    inner: usize,
    last: Fft<T>,
    real: Complex2Real<T>,
}

impl<T: ComplexElement> InverseRealFft<T> {
    /// `irfftn` of `input` into `output` as `params` say (the output's shape gives the real lengths).
    pub fn new(input: &XData<T>, output: &XData<T::Real>, params: RealFftParams) -> InverseRealFft<T> {
        InverseRealFft { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the real output, transforms `input` into it once and returns it.
    pub fn apply(input: &XData<T>, params: RealFftParams) -> Result<XData<T::Real>> {
        let shape = Self::output_shape(input.shape(), &params)?;
        let out = XData::uninit(input.app(), "InverseRealFft", &shape)?;
        InverseRealFft::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape for a half spectrum's shape: the last transformed axis of extent `m` becomes
    /// [`RealFftParams::length`], by default `2·(m − 1)`.
    ///
    /// ```
    /// use cliper::{InverseRealFft, RealFftParams};
    /// use num_complex::Complex32;
    /// assert_eq!(InverseRealFft::<Complex32>::output_shape(&[6, 4], &RealFftParams::default())?, vec![6, 6]);
    /// assert_eq!(InverseRealFft::<Complex32>::output_shape(&[6, 4], &RealFftParams::default().length(7))?, vec![6, 7]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &RealFftParams) -> Result<Vec<usize>> {
        let Transformed { last, extent, .. } = transformed_axes("InverseRealFft", &params.axes, shape)?;
        let n = params.length.unwrap_or(2 * extent.saturating_sub(1));
        if n == 0 {
            return Err(Error::invalid(
                "InverseRealFft",
                format!("a half spectrum of {extent} on axis {last} (shape {shape:?}) gives no data; give a length"),
            ));
        }
        Ok(shape.iter().enumerate().map(|(k, &e)| if k == last { n } else { e }).collect())
    }

    /// How the complex transforms run (the other axes, then the halved one); `None` before `init`.
    pub fn strategy(&self) -> Option<FftStrategy> {
        let plan = self.plan.as_ref()?;
        let mut axes = match &plan.first {
            FirstStep::Copy(_) => Vec::new(),
            FirstStep::Fft(f) => f.strategy()?.axes,
        };
        axes.extend(plan.last.strategy()?.axes);
        Some(FftStrategy { axes })
    }
}

impl<T: ComplexElement> Process for InverseRealFft<T> {
    fn name(&self) -> &str {
        "InverseRealFft"
    }

    fn init(&mut self) -> Result<()> {
        let op = "InverseRealFft";
        let shape = self.input.shape().to_vec();
        let transformed = transformed_axes(op, &self.params.axes, &shape)?;
        let (last, m) = (transformed.last, transformed.extent);
        let out_shape = self.output.shape().to_vec();
        let differs = |k: usize| k != last && out_shape.get(k) != shape.get(k);
        let n = match out_shape.get(last) {
            Some(&n)
                if n > 0
                    && out_shape.len() == shape.len()
                    && !(0..shape.len()).any(differs)
                    && self.params.length.is_none_or(|l| l == n) =>
            {
                n
            }
            _ => {
                let rule = format!("the input's shape {shape:?} with any positive length on axis {last}");
                return Err(Error::shape_rule(op, rule, &out_shape));
            }
        };
        let app = self.input.app();
        let half = XData::<T>::uninit(app, op, &shape)?;
        let others = transformed.others();
        let mut first = if others.is_empty() {
            FirstStep::Copy(Box::new(StridedCopy::new(&self.input, &half, CopyParams::default())))
        } else {
            FirstStep::Fft(Box::new(Fft::new(&self.input, &half, self.params.fft(&others, FftDirection::Inverse))))
        };
        match &mut first {
            FirstStep::Copy(c) => c.init()?,
            FirstStep::Fft(f) => f.init()?,
        }
        let full = XData::<T>::uninit(app, op, &out_shape)?;
        let inner: usize = out_shape.iter().skip(last + 1).product();
        let index = IndexType::for_extent((full.len().max(half.len())) as u64);
        let extend = fft_program::<T>(app, index, FftPart::HermitianExtend)?.kernel("hermitian_extend")?.owned_by(op);
        let spatial = XData::<T>::uninit(app, op, &out_shape)?;
        let mut last_fft = Fft::new(&full, &spatial, self.params.fft(&[last], FftDirection::Inverse));
        last_fft.init()?;
        let mut real = Complex2Real::new(&spatial, &self.output, ComplexPart::Real);
        real.init()?;
        self.plan.set(InversePlan { first, half, extend, full, index, m, n, inner, last: last_fft, real });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("InverseRealFft")?;
        match &mut plan.first {
            FirstStep::Copy(c) => c.launch()?,
            FirstStep::Fft(f) => f.launch()?,
        }
        let total = plan.full.len();
        if total > 0 {
            let group = 256;
            let element = std::mem::size_of::<T>() as u64;
            plan.extend
                .launch()
                .input("src", &plan.half)
                .output("dst", &plan.full)
                .index("m", plan.index, plan.m as u64)
                .index("n", plan.index, plan.n as u64)
                .index("inner", plan.index, plan.inner as u64)
                .index("total", plan.index, total as u64)
                .global(&[total.div_ceil(group) * group])
                .local(&[group])
                .work(2 * total as u64 * element, 0)
                .enqueue()?;
        }
        plan.last.launch()?;
        plan.real.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
