//! [`Transpose`] and [`ConjugateTranspose`]: swap the last two axes of an N-d array (a batch of matrices).

use super::copy_plan::{CopyPlan, CopyStrategy};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Writes the transpose of each matrix of `input` (shape `[batch…, rows, cols]`) into `output`
/// (`[batch…, cols, rows]`). Any sizes; either array may be a strided view.
///
/// The kernel moves tiles through local memory (padded by one column against bank conflicts), so both the
/// reads and the writes are coalesced; edge tiles are handled inside the kernel. To force a tile shape, copy the
/// transposed view with [`super::StridedCopy`] and [`super::CopyParams::tiles`]: it is the same plan.
///
/// ```
/// use cliper::{ClApp, Process, Transpose, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let at = Transpose::apply(&a)?; // allocates the output, runs once
/// assert_eq!(at.shape(), &[3, 2]);
/// assert_eq!(at.to_vec()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// // Or bound to arrays, planned once and launched as often as needed:
/// let mut t = Transpose::new(&a, &at);
/// t.run()?;
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Transpose<T: Element> {
    input: XData<T>,
    output: XData<T>,
    conjugate: bool,
    plan: Prepared<(CopyPlan, XData<T>)>,
}

impl<T: Element> Transpose<T> {
    /// A transpose of `input` into `output`.
    pub fn new(input: &XData<T>, output: &XData<T>) -> Transpose<T> {
        Transpose { input: input.clone(), output: output.clone(), conjugate: false, plan: Prepared::default() }
    }

    /// Allocates the output, transposes into it once, and returns it.
    pub fn apply(input: &XData<T>) -> Result<XData<T>> {
        let output = XData::uninit(input.app(), "Transpose", &Self::output_shape(input.shape())?)?;
        Transpose::new(input, &output).run()?;
        Ok(output)
    }

    /// The output shape for an input shape: the last two extents swapped.
    ///
    /// ```
    /// assert_eq!(cliper::Transpose::<f32>::output_shape(&[4, 2, 3])?, vec![4, 3, 2]);
    /// assert!(cliper::Transpose::<f32>::output_shape(&[5]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        swapped("Transpose", shape)
    }

    /// The copy kernel `init` chose; `None` before `init`.
    pub fn strategy(&self) -> Option<CopyStrategy> {
        self.plan.as_ref().map(|(p, _)| p.strategy())
    }

    fn op(&self) -> &'static str {
        if self.conjugate { "ConjugateTranspose" } else { "Transpose" }
    }
}

/// `shape` with its last two extents swapped, or an error naming `op` for fewer than two axes.
fn swapped(op: &str, shape: &[usize]) -> Result<Vec<usize>> {
    let n = shape.len();
    if n < 2 {
        return Err(Error::invalid(op, format!("needs an array of at least 2 axes, got shape {shape:?}")));
    }
    let mut out = shape.to_vec();
    out.swap(n - 2, n - 1);
    Ok(out)
}

impl<T: Element> Process for Transpose<T> {
    fn name(&self) -> &str {
        self.op()
    }

    fn init(&mut self) -> Result<()> {
        let op = self.op();
        let expected = swapped(op, self.input.shape())?;
        if self.output.shape() != expected.as_slice() {
            return Err(Error::shape(op, &expected, self.output.shape()));
        }
        let view = self.input.t();
        self.plan.set((CopyPlan::new(op, &view, &self.output, self.conjugate, None)?, view));
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let op = self.op();
        let (plan, view) = self.plan.get(op)?;
        plan.launch(op, view, &self.output)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// [`Transpose`] that also conjugates complex elements (the Hermitian transpose, `Aᴴ`); for real types it is a
/// plain transpose.
///
/// ```
/// use cliper::{ClApp, ConjugateTranspose, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[1, 2], &[C::new(1.0, 2.0), C::new(3.0, -4.0)])?;
/// let ah = ConjugateTranspose::apply(&a)?;
/// assert_eq!(ah.to_vec()?, vec![C::new(1.0, -2.0), C::new(3.0, 4.0)]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ConjugateTranspose<T: Element>(Transpose<T>);

impl<T: Element> ConjugateTranspose<T> {
    /// A conjugate transpose of `input` into `output` (shape `[batch…, cols, rows]`).
    pub fn new(input: &XData<T>, output: &XData<T>) -> ConjugateTranspose<T> {
        let mut t = Transpose::new(input, output);
        t.conjugate = true;
        ConjugateTranspose(t)
    }

    /// Allocates the output, conjugate-transposes into it once, and returns it.
    pub fn apply(input: &XData<T>) -> Result<XData<T>> {
        let output = XData::uninit(input.app(), "ConjugateTranspose", &Self::output_shape(input.shape())?)?;
        ConjugateTranspose::new(input, &output).run()?;
        Ok(output)
    }

    /// The output shape: the last two extents swapped (as [`Transpose::output_shape`]).
    ///
    /// ```
    /// assert_eq!(cliper::ConjugateTranspose::<f32>::output_shape(&[2, 5])?, vec![5, 2]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        swapped("ConjugateTranspose", shape)
    }

    /// The copy kernel `init` chose (see [`Transpose::strategy`]).
    pub fn strategy(&self) -> Option<CopyStrategy> {
        self.0.strategy()
    }
}

impl<T: Element> Process for ConjugateTranspose<T> {
    fn name(&self) -> &str {
        self.0.name()
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
