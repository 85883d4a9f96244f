//! [`Fill`]: sets every element of an array (OpenCLIPER's MemSet).

use super::plan::{EwOp, EwPlan};
use crate::data::XData;
use crate::element::Element;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// Sets every element of `out` (any view, strided too) to `value`.
///
/// ```
/// use cliper::{ClApp, Fill, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f64>::zeros(&app, &[2, 3])?;
/// let mut p = Fill::new(&x.index_axis(1, 1)?, 7.5); // the middle column only
/// p.init()?;
/// p.launch()?;
/// assert_eq!(x.to_vec()?, vec![0.0, 7.5, 0.0, 0.0, 7.5, 0.0]);
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
