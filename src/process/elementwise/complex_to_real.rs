//! [`Complex2Real`] and [`ComplexAbs`]: real parts of complex arrays.

use super::plan::{ElementwiseStrategy, EwOp, EwPlan};
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// Which real quantity [`Complex2Real`] takes from each complex element.
///
/// ```
/// use cliper::{Complex2Real, ComplexPart, XData};
/// use num_complex::Complex64 as C;
/// let app = cliper::ClApp::new()?;
/// let z = XData::from_slice(&app, &[1], &[C::new(0.0, 2.0)])?;
/// assert_eq!(Complex2Real::apply(&z, ComplexPart::Arg)?.to_vec()?, vec![std::f64::consts::FRAC_PI_2]);
/// assert_eq!(Complex2Real::apply(&z, ComplexPart::default())?.to_vec()?, vec![2.0]); // Abs
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ComplexPart {
    /// The real part (numpy `.real`).
    Real,
    /// The imaginary part (`.imag`).
    Imag,
    /// The magnitude `|z|` (`numpy.abs`, computed with `hypot`, so no overflow for large parts).
    #[default]
    Abs,
    /// The phase in (−π, π] (`numpy.angle`).
    Arg,
}

impl ComplexPart {
    fn op(self) -> EwOp {
        match self {
            ComplexPart::Real => EwOp::Real,
            ComplexPart::Imag => EwOp::Imag,
            ComplexPart::Abs => EwOp::Abs,
            ComplexPart::Arg => EwOp::Arg,
        }
    }
}

/// A real array from a complex one of the same shape: real or imaginary part, magnitude or phase.
///
/// ```
/// use cliper::{ClApp, Complex2Real, ComplexPart, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let z = XData::from_slice(&app, &[2], &[C::new(3.0, 4.0), C::new(0.0, -2.0)])?;
/// let out = XData::<f32>::zeros(&app, &[2])?;
/// for (part, want) in [(ComplexPart::Real, [3.0, 0.0]), (ComplexPart::Imag, [4.0, -2.0]), (ComplexPart::Abs, [5.0, 2.0])] {
///     Complex2Real::new(&z, &out, part).run()?;
///     assert_eq!(out.to_vec()?, want);
/// }
/// assert_eq!(Complex2Real::apply(&z, ComplexPart::Arg)?.to_vec()?[1], -std::f32::consts::FRAC_PI_2);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Complex2Real<T: ComplexElement> {
    x: XData<T>,
    out: XData<T::Real>,
    part: ComplexPart,
    plan: Prepared<EwPlan>,
}

impl<T: ComplexElement> Complex2Real<T> {
    /// `out = part(x)`.
    pub fn new(x: &XData<T>, out: &XData<T::Real>, part: ComplexPart) -> Complex2Real<T> {
        Complex2Real { x: x.clone(), out: out.clone(), part, plan: Prepared::default() }
    }

    /// Allocates the output, takes `part` of `x` into it once and returns it.
    pub fn apply(x: &XData<T>, part: ComplexPart) -> Result<XData<T::Real>> {
        let out = XData::uninit(x.app(), "Complex2Real", &Self::output_shape(x.shape())?)?;
        Complex2Real::new(x, &out, part).run()?;
        Ok(out)
    }

    /// The output shape: the input's.
    ///
    /// ```
    /// assert_eq!(cliper::Complex2Real::<num_complex::Complex32>::output_shape(&[3, 4])?, vec![3, 4]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        Ok(shape.to_vec())
    }

    /// The kernel `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<ElementwiseStrategy> {
        self.plan.as_ref().map(EwPlan::strategy)
    }
}

impl<T: ComplexElement> Process for Complex2Real<T> {
    fn name(&self) -> &str {
        "Complex2Real"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(EwPlan::new::<T, T, T::Real>(self.name(), self.part.op(), &self.x, None, &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("Complex2Real")?;
        plan.launch(&self.x, &self.x, &self.out, T::from_c64(Default::default()))
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// `out = |x|` (OpenCLIPER's ComplexAbs): [`Complex2Real`] with [`ComplexPart::Abs`].
///
/// ```
/// use cliper::{ClApp, ComplexAbs, Process, XData};
/// use num_complex::Complex64 as C;
/// let app = ClApp::new()?;
/// let z = XData::from_slice(&app, &[1], &[C::new(-5.0, 12.0)])?;
/// let out = XData::<f64>::zeros(&app, &[1])?;
/// ComplexAbs::new(&z, &out).run()?;
/// assert_eq!(out.to_vec()?, vec![13.0]);
/// assert_eq!(ComplexAbs::apply(&z)?.to_vec()?, vec![13.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ComplexAbs<T: ComplexElement>(Complex2Real<T>);

impl<T: ComplexElement> ComplexAbs<T> {
    /// `out = |x|`.
    pub fn new(x: &XData<T>, out: &XData<T::Real>) -> ComplexAbs<T> {
        ComplexAbs(Complex2Real::new(x, out, ComplexPart::Abs))
    }

    /// Allocates the output, computes `|x|` into it once and returns it.
    pub fn apply(x: &XData<T>) -> Result<XData<T::Real>> {
        Complex2Real::apply(x, ComplexPart::Abs)
    }

    /// The output shape: the input's.
    ///
    /// ```
    /// assert_eq!(cliper::ComplexAbs::<num_complex::Complex64>::output_shape(&[5])?, vec![5]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        Ok(shape.to_vec())
    }

    /// The kernel `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<ElementwiseStrategy> {
        self.0.strategy()
    }
}

impl<T: ComplexElement> Process for ComplexAbs<T> {
    fn name(&self) -> &str {
        "ComplexAbs"
    }

    fn init(&mut self) -> Result<()> {
        self.0.init()
    }

    fn launch(&mut self) -> Result<()> {
        self.0.launch()
    }

    fn is_initialized(&self) -> bool {
        self.0.is_initialized()
    }
}
