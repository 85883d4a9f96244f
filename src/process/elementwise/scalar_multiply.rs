//! [`ScalarMultiply`]: `out = a · x`.

use super::plan::{ElementwiseStrategy, EwOp, EwPlan};
use crate::data::XData;
use crate::element::Element;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// `out = factor · x` for real or complex arrays (a complex factor rotates as well as scales). `out` may be `x`.
///
/// ```
/// use cliper::{ClApp, Process, ScalarMultiply, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[3], &[1.0f32, -2.0, 0.5])?;
/// ScalarMultiply::new(&x, &x, 4.0).run()?; // in place
/// assert_eq!(x.to_vec()?, vec![4.0, -8.0, 2.0]);
/// assert_eq!(ScalarMultiply::apply(&x, 0.5)?.to_vec()?, vec![2.0, -4.0, 1.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ScalarMultiply<T: Element> {
    x: XData<T>,
    out: XData<T>,
    factor: T,
    plan: Prepared<EwPlan>,
}

impl<T: Element> ScalarMultiply<T> {
    /// `out = factor · x`.
    pub fn new(x: &XData<T>, out: &XData<T>, factor: T) -> ScalarMultiply<T> {
        ScalarMultiply { x: x.clone(), out: out.clone(), factor, plan: Prepared::default() }
    }

    /// Allocates the output, computes `factor · x` into it once and returns it.
    pub fn apply(x: &XData<T>, factor: T) -> Result<XData<T>> {
        let out = XData::uninit(x.app(), "ScalarMultiply", &Self::output_shape(x.shape())?)?;
        ScalarMultiply::new(x, &out, factor).run()?;
        Ok(out)
    }

    /// The output shape: the input's.
    ///
    /// ```
    /// assert_eq!(cliper::ScalarMultiply::<f32>::output_shape(&[7])?, vec![7]);
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

impl<T: Element> Process for ScalarMultiply<T> {
    fn name(&self) -> &str {
        "ScalarMultiply"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(EwPlan::new::<T, T, T>(self.name(), EwOp::Scale, &self.x, None, &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("ScalarMultiply")?;
        plan.launch(&self.x, &self.x, &self.out, self.factor)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
