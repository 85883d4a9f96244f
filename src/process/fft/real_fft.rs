//! [`RealFft`] and [`InverseRealFft`]: numpy's `rfftn` and `irfftn`, built on the complex [`Fft`].
//!
//! `RealFft` widens the real input to complex, transforms every chosen axis and keeps the first n/2 + 1
//! frequencies of the last one; `InverseRealFft` inverts the other axes first, extends the half spectrum of the
//! last axis by Hermitian symmetry (`hermitian_extend` in `kernels/fft.cl`), inverts it and keeps the real part —
//! which ignores the imaginary parts of the zero and Nyquist terms exactly as numpy does. Both move about twice
//! the data a dedicated real-to-complex kernel would (the complex intermediate is full size).

use super::complex_fft::fft_program;
use super::complex_fft::{Fft, FftDirection, FftNorm};
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
            return Err(Error::invalid(op, format!("axis {a} is out of range for shape {shape:?}")));
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

/// numpy's `rfftn(x, axes=axes, norm=norm)`: the FFT of real data, keeping the n/2 + 1 non-negative frequencies
/// of the last transformed axis (the others follow by Hermitian symmetry).
///
/// ```
/// use cliper::{ClApp, Process, RealFft, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[1.0f32, 2.0, 3.0, 4.0])?;
/// let y = XData::<C>::zeros(&app, &RealFft::<C>::output_shape(x.shape(), None)?)?; // [3]
/// let mut f = RealFft::new(&x, &y);
/// f.init()?;
/// f.launch()?;
/// // numpy.fft.rfft([1, 2, 3, 4]) = [10, -2+2j, -2]
/// let want = [C::new(10.0, 0.0), C::new(-2.0, 2.0), C::new(-2.0, 0.0)];
/// assert!(y.to_vec()?.iter().zip(want).all(|(a, b)| (a - b).norm() < 1e-5));
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct RealFft<T: ComplexElement> {
    input: XData<T::Real>,
    output: XData<T>,
    axes: Option<Vec<usize>>,
    norm: FftNorm,
    plan: Prepared<RealPlan<T>>,
}

struct RealPlan<T: ComplexElement> {
    widen: EwPlan,
    wide: XData<T>,
    fft: Fft<T>,
    keep: StridedCopy<T>,
}

impl<T: ComplexElement> RealFft<T> {
    /// `rfftn` of `input` over every axis into `output`.
    pub fn new(input: &XData<T::Real>, output: &XData<T>) -> RealFft<T> {
        RealFft {
            input: input.clone(),
            output: output.clone(),
            axes: None,
            norm: FftNorm::Backward,
            plan: Prepared::default(),
        }
    }

    /// Transform only these axes; the last one listed is halved.
    pub fn axes(mut self, axes: &[usize]) -> RealFft<T> {
        self.axes = Some(axes.to_vec());
        self
    }

    /// The normalisation (default [`FftNorm::Backward`]).
    pub fn norm(mut self, norm: FftNorm) -> RealFft<T> {
        self.norm = norm;
        self
    }

    /// The output shape for an input shape: the last transformed axis (the last axis when `axes` is `None`)
    /// becomes n/2 + 1.
    pub fn output_shape(shape: &[usize], axes: Option<&[usize]>) -> Result<Vec<usize>> {
        let Transformed { last, extent, .. } = transformed_axes("RealFft", &axes.map(<[usize]>::to_vec), shape)?;
        Ok(shape.iter().enumerate().map(|(k, &n)| if k == last { extent / 2 + 1 } else { n }).collect())
    }
}

impl<T: ComplexElement> Process for RealFft<T> {
    fn name(&self) -> &str {
        "RealFft"
    }

    fn init(&mut self) -> Result<()> {
        let op = "RealFft";
        let shape = self.input.shape().to_vec();
        let Transformed { axes, last, extent } = transformed_axes(op, &self.axes, &shape)?;
        let expected = RealFft::<T>::output_shape(&shape, Some(&axes))?;
        if self.output.shape() != expected.as_slice() {
            return Err(Error::Shape {
                op: op.into(),
                expected: format!("{expected:?} (the input {shape:?} with axis {last} halved)"),
                got: format!("{:?}", self.output.shape()),
            });
        }
        let app = self.input.app();
        let wide = XData::<T>::uninit(app, op, &shape)?;
        let widen = EwPlan::new::<T::Real, T::Real, T>(op, EwOp::Widen, &self.input, None, &wide)?;
        let spectrum = XData::<T>::uninit(app, op, &shape)?;
        let mut fft = Fft::new(&wide, &spectrum, FftDirection::Forward).axes(&axes).norm(self.norm);
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

/// numpy's `irfftn(x, s, axes=axes, norm=norm)`: real data back from the half spectrum `[… n/2 + 1]` of the
/// last transformed axis; `output`'s shape gives the lengths (numpy's `s`), so odd lengths come back too. Half
/// spectra longer than needed are cropped and shorter ones zero-padded, as numpy does.
///
/// ```
/// use cliper::{ClApp, InverseRealFft, Process, XData};
/// use num_complex::Complex64 as C;
/// let app = ClApp::new()?;
/// let half = XData::from_slice(&app, &[3], &[C::new(10.0, 0.0), C::new(-2.0, 2.0), C::new(-2.0, 0.0)])?;
/// let x = XData::<f64>::zeros(&app, &[4])?;
/// let mut f = InverseRealFft::new(&half, &x);
/// f.init()?;
/// f.launch()?;
/// assert!(x.to_vec()?.iter().zip([1.0, 2.0, 3.0, 4.0]).all(|(a, b)| (a - b).abs() < 1e-12));
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct InverseRealFft<T: ComplexElement> {
    input: XData<T>,
    output: XData<T::Real>,
    axes: Option<Vec<usize>>,
    norm: FftNorm,
    plan: Prepared<InversePlan<T>>,
}

struct InversePlan<T: ComplexElement> {
    /// The inverse transform of the other axes (or a copy into contiguous scratch) into `half`.
    first: Box<dyn Process>,
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
    /// `irfftn` of `input` over every axis into `output`.
    pub fn new(input: &XData<T>, output: &XData<T::Real>) -> InverseRealFft<T> {
        InverseRealFft {
            input: input.clone(),
            output: output.clone(),
            axes: None,
            norm: FftNorm::Backward,
            plan: Prepared::default(),
        }
    }

    /// Transform only these axes; the last one listed is the halved one.
    pub fn axes(mut self, axes: &[usize]) -> InverseRealFft<T> {
        self.axes = Some(axes.to_vec());
        self
    }

    /// The normalisation (default [`FftNorm::Backward`]: × 1/n per axis).
    pub fn norm(mut self, norm: FftNorm) -> InverseRealFft<T> {
        self.norm = norm;
        self
    }
}

impl<T: ComplexElement> Process for InverseRealFft<T> {
    fn name(&self) -> &str {
        "InverseRealFft"
    }

    fn init(&mut self) -> Result<()> {
        let op = "InverseRealFft";
        let shape = self.input.shape().to_vec();
        let transformed = transformed_axes(op, &self.axes, &shape)?;
        let (last, m) = (transformed.last, transformed.extent);
        let out_shape = self.output.shape().to_vec();
        let differs = |k: usize| k != last && out_shape.get(k) != shape.get(k);
        let n = match out_shape.get(last) {
            Some(&n) if n > 0 && out_shape.len() == shape.len() && !(0..shape.len()).any(differs) => n,
            _ => {
                return Err(Error::Shape {
                    op: op.into(),
                    expected: format!("the input's shape {shape:?} with any positive length on axis {last}"),
                    got: format!("{out_shape:?}"),
                });
            }
        };
        let app = self.input.app();
        let half = XData::<T>::uninit(app, op, &shape)?;
        let others = transformed.others();
        let mut first: Box<dyn Process> = if others.is_empty() {
            Box::new(StridedCopy::new(&self.input, &half, CopyParams::default()))
        } else {
            Box::new(Fft::new(&self.input, &half, FftDirection::Inverse).axes(&others).norm(self.norm))
        };
        first.init()?;
        let full = XData::<T>::uninit(app, op, &out_shape)?;
        let inner: usize = out_shape.iter().skip(last + 1).product();
        let index = IndexType::for_extent((full.len().max(half.len())) as u64);
        let extend = fft_program::<T>(app, index)?.kernel("hermitian_extend")?.owned_by(op);
        let spatial = XData::<T>::uninit(app, op, &out_shape)?;
        let mut last_fft = Fft::new(&full, &spatial, FftDirection::Inverse).axes(&[last]).norm(self.norm);
        last_fft.init()?;
        let mut real = Complex2Real::new(&spatial, &self.output, ComplexPart::Real);
        real.init()?;
        self.plan.set(InversePlan { first, half, extend, full, index, m, n, inner, last: last_fft, real });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("InverseRealFft")?;
        plan.first.launch()?;
        let total = plan.full.len();
        if total > 0 {
            let group = 256;
            let element = std::mem::size_of::<T>() as u64;
            plan.extend
                .launch()
                .input(&plan.half)
                .output(&plan.full)
                .index(plan.index, plan.m as u64)
                .index(plan.index, plan.n as u64)
                .index(plan.index, plan.inner as u64)
                .index(plan.index, total as u64)
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
