//! [`StridedCopy`]: copies one view into another of the same shape.

use super::copy_plan::CopyPlan;
use crate::data::XData;
use crate::element::Element;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// Copies one array view into another of the same shape (any strides on either side), on the device.
///
/// The planner picks a plain buffer copy, a row copy or a tiled transpose from the two layouts, so copying a
/// transposed or permuted view is as fast as a [`super::Transpose`].
///
/// ```
/// use cliper::{ClApp, Process, StridedCopy, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let col = XData::<f32>::zeros(&app, &[2])?;
/// let mut copy = StridedCopy::new(&a.index_axis(1, 2)?, &col); // the last column
/// copy.init()?;
/// copy.launch()?;
/// assert_eq!(col.to_vec()?, vec![3.0, 6.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct StridedCopy<T: Element> {
    input: XData<T>,
    output: XData<T>,
    plan: Prepared<CopyPlan>,
}

impl<T: Element> StridedCopy<T> {
    /// A copy of `input` into `output` (same shape; they must not overlap).
    pub fn new(input: &XData<T>, output: &XData<T>) -> StridedCopy<T> {
        StridedCopy { input: input.clone(), output: output.clone(), plan: Prepared::default() }
    }

    /// Which copy kernel `init` chose: `"copy_tiled"` (tiled transpose), `"copy_blocks"` (its CPU form), `"copy_rows"`, `"copy_buffer"` or
    /// `"none"` (empty array); `None` before `init`.
    pub fn strategy(&self) -> Option<&'static str> {
        self.plan.as_ref().map(|p| p.strategy())
    }
}

impl<T: Element> Process for StridedCopy<T> {
    fn name(&self) -> &str {
        "StridedCopy"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(CopyPlan::new("StridedCopy", &self.input, &self.output, false, None)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("StridedCopy")?;
        plan.launch("StridedCopy", &self.input, &self.output)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
