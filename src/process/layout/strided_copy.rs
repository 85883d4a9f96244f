//! [`StridedCopy`]: copies one view into another of the same shape.

use super::copy_plan::{CopyPlan, CopyStrategy, TransposeTiles};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Options of [`StridedCopy`]. Default: the device's tiles ([`TransposeTiles::for_device`]) and, on CPUs, the
/// register-block transpose.
///
/// ```
/// use cliper::{CopyParams, TransposeTiles};
/// let p = CopyParams::default().tiles(TransposeTiles { tile: 32, rows: 8 });
/// assert_eq!(p, CopyParams { tiles: Some(TransposeTiles { tile: 32, rows: 8 }) });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyParams {
    /// The tiled transpose's tile shape, for tuning (`init` rejects shapes the device cannot run); also keeps
    /// CPUs on the tiled kernel.
    pub tiles: Option<TransposeTiles>,
}

impl CopyParams {
    /// Forces the tiled transpose's tile shape.
    pub fn tiles(mut self, tiles: TransposeTiles) -> CopyParams {
        self.tiles = Some(tiles);
        self
    }
}

/// Copies one array view into another of the same shape (any strides on either side), on the device.
///
/// The planner picks a plain buffer copy, a row copy or a tiled transpose from the two layouts, so copying a
/// transposed or permuted view is as fast as a [`super::Transpose`].
///
/// ```
/// use cliper::{ClApp, CopyParams, Process, StridedCopy, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let col = XData::<f32>::zeros(&app, &[2])?;
/// StridedCopy::new(&a.index_axis(1, 2)?, &col, CopyParams::default()).run()?; // the last column
/// assert_eq!(col.to_vec()?, vec![3.0, 6.0]);
/// let at = StridedCopy::apply(&a.t(), CopyParams::default())?; // a new contiguous array
/// assert_eq!(at.to_vec()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct StridedCopy<T: Element> {
    input: XData<T>,
    output: XData<T>,
    params: CopyParams,
    plan: Prepared<CopyPlan>,
}

impl<T: Element> StridedCopy<T> {
    /// A copy of `input` into `output` (same shape; they must not overlap).
    pub fn new(input: &XData<T>, output: &XData<T>, params: CopyParams) -> StridedCopy<T> {
        StridedCopy { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates a contiguous array of `input`'s shape, copies `input` into it once, and returns it.
    pub fn apply(input: &XData<T>, params: CopyParams) -> Result<XData<T>> {
        let output = XData::uninit(input.app(), "StridedCopy", &Self::output_shape(input.shape())?)?;
        StridedCopy::new(input, &output, params).run()?;
        Ok(output)
    }

    /// The output shape: the input's.
    ///
    /// ```
    /// assert_eq!(cliper::StridedCopy::<f32>::output_shape(&[3, 4])?, vec![3, 4]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        if shape.iter().try_fold(1usize, |a, &n| a.checked_mul(n)).is_none() {
            return Err(Error::invalid("StridedCopy", format!("shape {shape:?} overflows the address space")));
        }
        Ok(shape.to_vec())
    }

    /// The copy kernel `init` chose; `None` before `init`.
    pub fn strategy(&self) -> Option<CopyStrategy> {
        self.plan.as_ref().map(|p| p.strategy())
    }
}

impl<T: Element> Process for StridedCopy<T> {
    fn name(&self) -> &str {
        "StridedCopy"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(CopyPlan::new("StridedCopy", &self.input, &self.output, false, self.params.tiles)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("StridedCopy")?.launch("StridedCopy", &self.input, &self.output)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
