//! [`RSoS`]: the root sum of squares over the coil axis.

use super::coil_plan::{CoilMode, CoilPlan, CoilStrategy};
use super::coil_sum::without_coils;
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// `out[f, p] = √(Σ_c |x[f, c, p]|²)`: the magnitude coil combination that needs no sensitivity maps. `x` is
/// `[frames…, coils, spatial…]` (complex), `out` real, the same shape without the coil axis (the parameter;
/// [`crate::KData::coil_axis`] for k-space data).
///
/// ```
/// use cliper::{ClApp, Process, RSoS, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 1], &[C::new(3.0, 0.0), C::new(0.0, 4.0)])?; // 2 coils, 1 pixel
/// assert_eq!(RSoS::apply(&x, 0)?.to_vec()?, vec![5.0]);
/// let out = XData::<f32>::zeros(&app, &[1])?;
/// RSoS::new(&x, &out, 0).run()?;
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct RSoS<T: ComplexElement> {
    x: XData<T>,
    out: XData<T::Real>,
    coil_axis: usize,
    plan: Prepared<CoilPlan<T, T::Real>>,
}

impl<T: ComplexElement> RSoS<T> {
    /// `out = √Σ |x|²` over axis `coil_axis`.
    pub fn new(x: &XData<T>, out: &XData<T::Real>, coil_axis: usize) -> RSoS<T> {
        RSoS { x: x.clone(), out: out.clone(), coil_axis, plan: Prepared::default() }
    }

    /// Allocates the output, combines `x` into it once and returns it.
    pub fn apply(x: &XData<T>, coil_axis: usize) -> Result<XData<T::Real>> {
        let out = XData::uninit(x.app(), "RSoS", &Self::output_shape(x.shape(), coil_axis)?)?;
        RSoS::new(x, &out, coil_axis).run()?;
        Ok(out)
    }

    /// The output shape: `shape` without the coil axis.
    ///
    /// ```
    /// assert_eq!(cliper::RSoS::<num_complex::Complex32>::output_shape(&[8, 32, 32], 0)?, vec![32, 32]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], coil_axis: usize) -> Result<Vec<usize>> {
        without_coils("RSoS", shape, coil_axis)
    }

    /// How `init` planned the combination; `None` before `init`.
    pub fn strategy(&self) -> Option<CoilStrategy> {
        self.plan.as_ref().map(CoilPlan::strategy)
    }
}

impl<T: ComplexElement> Process for RSoS<T> {
    fn name(&self) -> &str {
        "RSoS"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(CoilPlan::new("RSoS", CoilMode::Rsos, &self.x, self.coil_axis, None, &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("RSoS")?;
        plan.launch("RSoS", &self.x, None, &self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
