//! [`Fill`]: sets every element of an array (OpenCLIPER's MemSet).

use super::plan::{ElementwiseStrategy, EwOp, EwPlan};
use crate::app::ClApp;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Sets every element of `out` (any view, strided too) to `value`.
///
/// ```
/// use cliper::{ClApp, Fill, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f64>::zeros(&app, &[2, 3])?;
/// Fill::new(&x.index_axis(1, 1)?, 7.5).run()?; // the middle column only
/// assert_eq!(x.to_vec()?, vec![0.0, 7.5, 0.0, 0.0, 7.5, 0.0]);
/// assert_eq!(Fill::apply(&app, &[2], -1.0f32)?.to_vec()?, vec![-1.0, -1.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Fill<T: Element> {
    out: XData<T>,
    value: T,
    plan: Prepared<EwPlan>,
}

impl<T: Element> Fill<T> {
    /// Fills `out` with `value`.
    pub fn new(out: &XData<T>, value: T) -> Fill<T> {
        Fill { out: out.clone(), value, plan: Prepared::default() }
    }

    /// Allocates an array of `shape` on `app`'s device, fills it with `value` and returns it.
    pub fn apply(app: &ClApp, shape: &[usize], value: T) -> Result<XData<T>> {
        let out = XData::uninit(app, "Fill", &Self::output_shape(shape)?)?;
        Fill::new(&out, value).run()?;
        Ok(out)
    }

    /// The output shape: `shape` itself (an error when its element count overflows).
    ///
    /// ```
    /// assert_eq!(cliper::Fill::<f32>::output_shape(&[2, 3])?, vec![2, 3]);
    /// assert!(cliper::Fill::<f32>::output_shape(&[usize::MAX, 2]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        match shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n)) {
            Some(_) => Ok(shape.to_vec()),
            None => Err(Error::invalid("Fill", format!("shape {shape:?} overflows the address space"))),
        }
    }

    /// The kernel `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<ElementwiseStrategy> {
        self.plan.as_ref().map(EwPlan::strategy)
    }
}

impl<T: Element> Process for Fill<T> {
    fn name(&self) -> &str {
        "Fill"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(EwPlan::new::<T, T, T>(self.name(), EwOp::Fill, &self.out, None, &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("Fill")?;
        plan.launch(&self.out, &self.out, &self.out, self.value)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
