//! [`Stack`]: numpy.stack, arrays of one shape joined along a new axis, each copied into its place on the device.

use super::copy_plan::CopyStrategy;
use super::strided_copy::{CopyParams, StridedCopy};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::Process;

/// How a [`Stack`] copies: the copy planner's choice for each input, in order (inputs of one layout share one).
///
/// ```
/// use cliper::{ClApp, CopyStrategy, Process, Stack, StackStrategy, XData};
/// let app = ClApp::new()?;
/// let a = XData::<f32>::zeros(&app, &[3, 5])?;
/// let out = XData::<f32>::zeros(&app, &[2, 3, 5])?;
/// let mut s = Stack::new(&[a.clone(), a], &out, 0)?;
/// s.init()?;
/// let StackStrategy { copies } = s.strategy().unwrap();
/// assert_eq!(copies, vec![CopyStrategy::Buffer, CopyStrategy::Buffer]); // each input one contiguous block
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackStrategy {
    /// The copy of each input into its slice of the output.
    pub copies: Vec<CopyStrategy>,
}

impl std::fmt::Display for StackStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.copies.split_first() {
            Some((first, rest)) if rest.iter().all(|c| c == first) => write!(f, "{} × {first}", self.copies.len()),
            _ => {
                let each: Vec<String> = self.copies.iter().map(|c| c.to_string()).collect();
                write!(f, "{}", each.join(", "))
            }
        }
    }
}

/// `numpy.stack(inputs, axis)`: the inputs (one shape each) side by side along a new axis `axis` of the output,
/// each copied by the copy planner into its slice of the output.
///
/// ```
/// use cliper::{ClApp, Process, Stack, XData};
/// let app = ClApp::new()?;
/// let a = XData::from_slice(&app, &[2], &[1.0f32, 2.0])?;
/// let b = XData::from_slice(&app, &[2], &[3.0f32, 4.0])?;
/// let columns = Stack::apply(&[a, b], 1)?; // numpy.stack([a, b], axis=1)
/// assert_eq!(columns.to_vec()?, vec![1.0, 3.0, 2.0, 4.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Stack<T: Element> {
    copies: Vec<StridedCopy<T>>,
}

impl<T: Element> Stack<T> {
    /// The stack of `inputs` along `axis` into `output` (of [`Stack::output_shape`]).
    pub fn new(inputs: &[XData<T>], output: &XData<T>, axis: usize) -> Result<Stack<T>> {
        let shapes: Vec<&[usize]> = inputs.iter().map(|x| x.shape()).collect();
        let expected = Self::output_shape(&shapes, axis)?;
        if output.shape() != expected {
            return Err(Error::shape_because("stack", &expected, output.shape(), "the stacked shape"));
        }
        let copies = inputs
            .iter()
            .enumerate()
            .map(|(k, x)| Ok(StridedCopy::new(x, &output.index_axis(axis, k)?, CopyParams::default())))
            .collect::<Result<Vec<_>>>()?;
        Ok(Stack { copies })
    }

    /// Allocates the output, stacks `inputs` into it once and returns it.
    pub fn apply(inputs: &[XData<T>], axis: usize) -> Result<XData<T>> {
        let first = inputs.first().ok_or_else(|| Error::invalid("stack", "needs at least one array"))?;
        let shapes: Vec<&[usize]> = inputs.iter().map(|x| x.shape()).collect();
        let output = XData::uninit(first.app(), "stack", &Self::output_shape(&shapes, axis)?)?;
        Stack::new(inputs, &output, axis)?.run()?;
        Ok(output)
    }

    /// Each input's copy as `init` planned it; `None` before `init`.
    pub fn strategy(&self) -> Option<StackStrategy> {
        let copies = self.copies.iter().map(|c| c.strategy()).collect::<Option<Vec<_>>>()?;
        Some(StackStrategy { copies })
    }

    /// The stacked shape: the inputs' shape with the number of inputs inserted at `axis`. Refuses no inputs, an
    /// axis past the new rank, and inputs of different shapes (naming both).
    ///
    /// ```
    /// assert_eq!(cliper::Stack::<f32>::output_shape(&[&[4, 5], &[4, 5], &[4, 5]], 2)?, vec![4, 5, 3]);
    /// assert!(cliper::Stack::<f32>::output_shape(&[&[4, 5], &[5, 4]], 0).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shapes: &[&[usize]], axis: usize) -> Result<Vec<usize>> {
        let first = shapes.first().ok_or_else(|| Error::invalid("stack", "needs at least one array"))?;
        if let Some((k, other)) = shapes.iter().enumerate().find(|(_, s)| s != &first) {
            return Err(Error::invalid(
                "stack",
                format!("input {k} has shape {other:?}, input 0 {first:?}: every input needs one shape"),
            ));
        }
        if axis > first.len() {
            return Err(Error::invalid(
                "stack",
                format!("axis {axis} is past the {} axes of the stack of shape {first:?} arrays", first.len() + 1),
            ));
        }
        let mut shape = first.to_vec();
        shape.insert(axis, shapes.len());
        Ok(shape)
    }
}

impl<T: Element> Process for Stack<T> {
    fn name(&self) -> &str {
        "stack"
    }

    fn init(&mut self) -> Result<()> {
        self.copies.iter_mut().try_for_each(|c| c.init())
    }

    fn launch(&mut self) -> Result<()> {
        self.copies.iter_mut().try_for_each(|c| c.launch())
    }

    fn is_initialized(&self) -> bool {
        self.copies.iter().all(|c| c.is_initialized())
    }
}
