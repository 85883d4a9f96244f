//! [`Fft`]: complex fast Fourier transforms over any set of axes, any lengths, with numpy's normalisations.
//!
//! Planning (in `init`), per transformed axis of length n: lengths whose prime factors are all 2, 3, 5 or 7
//! run as Stockham autosort passes (`fft_passR` in `kernels/fft.cl`: radix 4 while 4 divides, one radix 2, then
//! 3, 5 and 7), each pass reading the whole array and writing it to a scratch copy; other lengths use
//! Bluestein's algorithm: a chirp product into a zero-padded length m ≥ 2n − 1 with only small factors, a
//! length-m transform, a product with the transformed chirp (computed on the host in float64 in `init`), the
//! inverse length-m transform and a last chirp product. Every table (roots of unity, chirps) is computed in
//! float64 on the host and uploaded once; `launch` only enqueues.
//!
//! The files: `fft_params.rs` (what to compute), `host_fft.rs` (float64 factorisations and tables),
//! `axis_plan.rs` (one axis's plan and device tables), `fft_plan.rs` (the whole plan, made in `init`),
//! `fft_launch.rs` (its enqueue), `fft_strategy.rs` (what the plan chose, reported).
//!
//! The axes are transformed one after another on a contiguous `[outer, n, inner]` view, so every pass reads and
//! writes along `inner`-contiguous rows; strided inputs and outputs go through a strided copy first or last.
//!
//! On GPUs ([`FftAlgorithm::LocalMemory`]) an axis runs instead as one launch of `fft_lines`, a kernel generated
//! per length (`lines.rs`): every pass of a line with the data in registers, radix 16 first. Axes too long
//! for one work-group split n = n1·n2 into two such launches (columns: the second writes the transposed positions
//! itself; rows: a transpose follows), and Bluestein runs whole in one launch (chirps, both length-m transforms
//! and the product between them), on columns through a transpose to rows and back when a column does not fit.

use super::fft_params::{FftAlgorithm, FftParams, transformed_axes};
use super::fft_plan::Plan;
use super::fft_strategy::FftStrategy;
use super::host_transform::HostPlan;
use crate::app::DeviceKind;
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// A complex FFT of `input` into `output` (same shape) over the chosen axes (default: all), forward or
/// inverse, with numpy's normalisations ([`FftParams`]). Any lengths: Stockham mixed-radix passes for lengths
/// with prime factors up to 7, Bluestein's algorithm for the rest; f32 (c32) and f64 (c64).
///
/// ```
/// use cliper::{ClApp, Fft, FftParams, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[C::new(1.0, 0.0), C::new(2.0, 0.0), C::new(0.0, 0.0), C::new(0.0, 0.0)])?;
/// let y = XData::zeros(&app, &[4])?;
/// Fft::new(&x, &y, FftParams::forward()).run()?;
/// // numpy.fft.fft([1, 2, 0, 0]) = [3, 1-2j, -1, 1+2j]
/// let want = [C::new(3.0, 0.0), C::new(1.0, -2.0), C::new(-1.0, 0.0), C::new(1.0, 2.0)];
/// assert!(y.to_vec()?.iter().zip(want).all(|(a, b)| (a - b).norm() < 1e-6));
/// let back = Fft::apply(&y, FftParams::inverse())?; // numpy.fft.ifft: × 1/n
/// assert!((back.to_vec()?[1] - C::new(2.0, 0.0)).norm() < 1e-6);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Fft<T: ComplexElement> {
    input: XData<T>,
    output: XData<T>,
    params: FftParams,
    plan: Prepared<Planned<T>>,
}

/// The kernels' plan, or the host's ([`FftAlgorithm::Host`]).
enum Planned<T: ComplexElement> {
    Device(Box<Plan<T>>),
    Host(HostPlan<T>),
}

impl<T: ComplexElement> Planned<T> {
    fn new(input: &XData<T>, output: &XData<T>, params: &FftParams) -> Result<Planned<T>> {
        let on_host = match params.algorithm {
            FftAlgorithm::Auto => input.app().device().kind == DeviceKind::Cpu,
            FftAlgorithm::Host => true,
            FftAlgorithm::LocalMemory | FftAlgorithm::GlobalPasses => false,
        };
        Ok(if on_host {
            Planned::Host(HostPlan::new(input, output, params)?)
        } else {
            Planned::Device(Box::new(Plan::new(input, output, params)?))
        })
    }

    fn strategy(&self) -> FftStrategy {
        match self {
            Planned::Device(plan) => plan.strategy(),
            Planned::Host(plan) => plan.strategy(),
        }
    }

    fn enqueue(&mut self, input: &XData<T>, output: &XData<T>) -> Result<()> {
        match self {
            Planned::Device(plan) => plan.enqueue(input, output),
            Planned::Host(plan) => plan.enqueue(input, output),
        }
    }
}

impl<T: ComplexElement> Fft<T> {
    /// The transform `params` describe of `input` into `output` (same shape).
    pub fn new(input: &XData<T>, output: &XData<T>, params: FftParams) -> Fft<T> {
        Fft { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates an output, transforms `input` into it once and returns it.
    ///
    /// ```
    /// use cliper::{ClApp, Fft, FftParams, XData};
    /// use num_complex::Complex64 as C;
    /// let app = ClApp::new()?;
    /// let x = XData::from_slice(&app, &[3], &[C::new(1.0, 0.0), C::new(1.0, 0.0), C::new(1.0, 0.0)])?;
    /// let y = Fft::apply(&x, FftParams::forward())?.to_vec()?;
    /// assert!((y[0] - C::new(3.0, 0.0)).norm() < 1e-12 && y[1].norm() < 1e-12 && y[2].norm() < 1e-12);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn apply(input: &XData<T>, params: FftParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "Fft", &Self::output_shape(input.shape(), &params)?)?;
        Fft::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (an error when an axis is out of range or given twice).
    ///
    /// ```
    /// use cliper::{Fft, FftParams};
    /// use num_complex::Complex32;
    /// assert_eq!(Fft::<Complex32>::output_shape(&[8, 16], &FftParams::forward().axes(&[1]))?, vec![8, 16]);
    /// assert!(Fft::<Complex32>::output_shape(&[8, 16], &FftParams::forward().axes(&[1, 1])).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &FftParams) -> Result<Vec<usize>> {
        transformed_axes(shape, params)?;
        Ok(shape.to_vec())
    }

    /// How each transformed axis is computed; `None` before `init`.
    pub fn strategy(&self) -> Option<FftStrategy> {
        self.plan.as_ref().map(Planned::strategy)
    }
}

impl<T: ComplexElement> Process for Fft<T> {
    fn name(&self) -> &str {
        "Fft"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(Planned::new(&self.input, &self.output, &self.params)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("Fft")?.enqueue(&self.input, &self.output)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
