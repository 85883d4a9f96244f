//! [`Transpose`] and [`ConjugateTranspose`]: swap the last two axes of an N-d array (a batch of matrices).

use super::copy_plan::{CopyPlan, TransposeTiles};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Writes the transpose of each matrix of `input` (shape `[batch…, rows, cols]`) into `output`
/// (`[batch…, cols, rows]`). Any sizes; either array may be a strided view.
///
/// The kernel moves `tile`×`tile` blocks through local memory (padded by one column against bank conflicts),
/// so both the reads and the writes are coalesced; edge tiles are handled inside the kernel.
///
/// ```
/// use cliper::{ClApp, Transpose, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2, 3], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let at = Transpose::apply(&a)?; // allocates the output, runs once
/// assert_eq!(at.shape(), &[3, 2]);
/// assert_eq!(at.to_vec()?, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Transpose<T: Element> {
    input: XData<T>,
    output: XData<T>,
    conjugate: bool,
    tiles: Option<TransposeTiles>,
    plan: Prepared<(CopyPlan, XData<T>)>,
}

impl<T: Element> Transpose<T> {
    /// A transpose of `input` into `output`.
    pub fn new(input: &XData<T>, output: &XData<T>) -> Transpose<T> {
        Transpose {
            input: input.clone(),
            output: output.clone(),
            conjugate: false,
            tiles: None,
            plan: Prepared::default(),
        }
    }

    /// Overrides the device's tile choice (for tuning; `init` rejects shapes the device cannot run).
    pub fn with_tiles(mut self, tiles: TransposeTiles) -> Transpose<T> {
        self.tiles = Some(tiles);
        self
    }

    /// The output shape for an input shape: the last two extents swapped.
    ///
    /// ```
    /// assert_eq!(cliper::Transpose::<f32>::output_shape(&[4, 2, 3])?, vec![4, 3, 2]);
    /// assert!(cliper::Transpose::<f32>::output_shape(&[5]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        Self::output_shape_for("Transpose", shape)
    }

    fn output_shape_for(op: &str, shape: &[usize]) -> Result<Vec<usize>> {
        let n = shape.len();
        if n < 2 {
            return Err(Error::invalid(op, format!("needs an array of at least 2 axes, got shape {shape:?}")));
        }
        let mut out = shape.to_vec();
        out.swap(n - 2, n - 1);
        Ok(out)
    }

    /// Allocates the output, transposes into it once, and returns it.
    pub fn apply(input: &XData<T>) -> Result<XData<T>> {
        let output = XData::uninit(input.app(), "Transpose", &Self::output_shape(input.shape())?)?;
        let mut t = Transpose::new(input, &output);
        t.init()?;
        t.launch()?;
        Ok(output)
    }

    /// Which copy kernel `init` chose: `"copy_tiled"` (tiled transpose), `"copy_blocks"` (its CPU form), `"copy_rows"`, `"copy_buffer"` or
    /// `"none"` (empty array); `None` before `init`.
    pub fn strategy(&self) -> Option<&'static str> {
        self.plan.as_ref().map(|(p, _)| p.strategy())
    }

    fn op(&self) -> &'static str {
        if self.conjugate { "ConjugateTranspose" } else { "Transpose" }
    }
}

impl<T: Element> Process for Transpose<T> {
    fn name(&self) -> &str {
        self.op()
    }

    fn init(&mut self) -> Result<()> {
        let op = self.op();
        let expected = Self::output_shape_for(op, self.input.shape())?;
        if self.output.shape() != expected.as_slice() {
            return Err(Error::shape(op, &expected, self.output.shape()));
        }
        let view = self.input.t();
        self.plan.set((CopyPlan::new(op, &view, &self.output, self.conjugate, self.tiles)?, view));
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

    /// Overrides the device's tile choice.
    pub fn with_tiles(self, tiles: TransposeTiles) -> ConjugateTranspose<T> {
        ConjugateTranspose(self.0.with_tiles(tiles))
    }

    /// Which copy kernel `init` chose (see [`Transpose::strategy`]).
    pub fn strategy(&self) -> Option<&'static str> {
        self.0.strategy()
    }

    /// Allocates the output, conjugate-transposes into it once, and returns it.
    pub fn apply(input: &XData<T>) -> Result<XData<T>> {
        let output = XData::uninit(
            input.app(),
            "ConjugateTranspose",
            &Transpose::<T>::output_shape_for("ConjugateTranspose", input.shape())?,
        )?;
        let mut t = ConjugateTranspose::new(input, &output);
        t.init()?;
        t.launch()?;
        Ok(output)
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
