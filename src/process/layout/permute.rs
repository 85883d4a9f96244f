//! [`Permute`]: reorders the axes of an N-d array into a new array.

use super::copy_plan::{CopyPlan, CopyStrategy};
use crate::data::{XData, check_permutation};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Writes `input` with its axes reordered into `output`: axis `k` of the output is axis `axes[k]` of the input
/// (numpy's `transpose(axes)` followed by a copy). Plans like [`super::StridedCopy`]: a tiled transpose when
/// the fastest axis changes, row copies when it does not.
///
/// ```
/// use cliper::{ClApp, Permute, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 1, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let y = Permute::apply(&x, &[2, 0, 1])?;
/// assert_eq!(y.shape(), &[3, 2, 1]);
/// assert_eq!(y.to_vec()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Permute<T: Element> {
    input: XData<T>,
    output: XData<T>,
    axes: Vec<usize>,
    plan: Prepared<(CopyPlan, XData<T>)>,
}

impl<T: Element> Permute<T> {
    /// A permutation of `input`'s axes into `output`.
    pub fn new(input: &XData<T>, output: &XData<T>, axes: &[usize]) -> Permute<T> {
        Permute { input: input.clone(), output: output.clone(), axes: axes.to_vec(), plan: Prepared::default() }
    }

    /// The output shape: `shape[axes[k]]` for each `k`.
    ///
    /// ```
    /// assert_eq!(cliper::Permute::<f32>::output_shape(&[2, 3, 4], &[1, 2, 0])?, vec![3, 4, 2]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], axes: &[usize]) -> Result<Vec<usize>> {
        check_permutation("Permute", axes, shape.len()).map_err(|_| {
            let n = shape.len();
            Error::invalid("Permute", format!("axes {axes:?} are not a permutation of the {n} axes of shape {shape:?}"))
        })?;
        axes.iter().map(|&a| shape.get(a).copied().ok_or_else(|| Error::axis("Permute", a as isize, shape))).collect()
    }

    /// The copy kernel `init` chose; `None` before `init`.
    pub fn strategy(&self) -> Option<CopyStrategy> {
        self.plan.as_ref().map(|(p, _)| p.strategy())
    }

    /// Allocates the output, permutes into it once, and returns it.
    pub fn apply(input: &XData<T>, axes: &[usize]) -> Result<XData<T>> {
        let output = XData::uninit(input.app(), "Permute", &Self::output_shape(input.shape(), axes)?)?;
        Permute::new(input, &output, axes).run()?;
        Ok(output)
    }
}

impl<T: Element> Process for Permute<T> {
    fn name(&self) -> &str {
        "Permute"
    }

    fn init(&mut self) -> Result<()> {
        let expected = Self::output_shape(self.input.shape(), &self.axes)?;
        if self.output.shape() != expected.as_slice() {
            return Err(Error::shape("Permute", &expected, self.output.shape()));
        }
        let view = self.input.permuted_axes(&self.axes)?;
        self.plan.set((CopyPlan::new("Permute", &view, &self.output, false, None)?, view));
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let (plan, view) = self.plan.get("Permute")?;
        plan.launch("Permute", view, &self.output)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
