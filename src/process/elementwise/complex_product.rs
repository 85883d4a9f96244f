//! [`ComplexElementProd`]: element-wise complex products, optionally with the second operand conjugated.

use super::plan::{ElementwiseStrategy, EwOp, EwPlan, broadcast_to};
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// Whether [`ComplexElementProd`] conjugates its second operand.
///
/// ```
/// use cliper::{ComplexElementProd, ProductKind, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[1], &[C::new(0.0, 1.0)])?;
/// assert_eq!(ComplexElementProd::apply(&x, &x, ProductKind::Plain)?.to_vec()?, vec![C::new(-1.0, 0.0)]);
/// assert_eq!(ComplexElementProd::apply(&x, &x, ProductKind::ConjugateSecond)?.to_vec()?, vec![C::new(1.0, 0.0)]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ProductKind {
    /// `x ⊙ y`.
    #[default]
    Plain,
    /// `x ⊙ conj(y)` (OpenCLIPER's ComplexElementProd with its conjugate flag; coil combination).
    ConjugateSecond,
}

/// `out = x ⊙ y` or `out = x ⊙ conj(y)` element by element, with `y` broadcast to `x`'s shape by numpy's
/// rules — so coil sensitivity maps `[coils, y, x]` multiply k-space or images `[frames, coils, y, x]` without
/// copies. `out` may be `x` itself (in place).
///
/// ```
/// use cliper::{ClApp, ComplexElementProd, Process, ProductKind, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 2], &[C::new(1.0, 1.0), C::new(2.0, 0.0), C::new(0.0, 1.0), C::new(3.0, 0.0)])?;
/// let maps = XData::from_slice(&app, &[2], &[C::new(0.0, 1.0), C::new(2.0, 0.0)])?; // broadcast over rows
/// let out = ComplexElementProd::apply(&x, &maps, ProductKind::ConjugateSecond)?;
/// // (1+i)·conj(i) = 1−i, 2·2 = 4, i·(−i) = 1, 3·2 = 6
/// assert_eq!(out.to_vec()?, vec![C::new(1.0, -1.0), C::new(4.0, 0.0), C::new(1.0, 0.0), C::new(6.0, 0.0)]);
/// ComplexElementProd::new(&x, &maps, &x, ProductKind::Plain).run()?; // in place
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ComplexElementProd<T: ComplexElement> {
    x: XData<T>,
    y: XData<T>,
    out: XData<T>,
    kind: ProductKind,
    plan: Prepared<EwPlan>,
}

impl<T: ComplexElement> ComplexElementProd<T> {
    /// `out = x ⊙ y`, or `x ⊙ conj(y)`, as `kind` says.
    pub fn new(x: &XData<T>, y: &XData<T>, out: &XData<T>, kind: ProductKind) -> ComplexElementProd<T> {
        ComplexElementProd { x: x.clone(), y: y.clone(), out: out.clone(), kind, plan: Prepared::default() }
    }

    /// Allocates the output, computes the product into it once and returns it.
    pub fn apply(x: &XData<T>, y: &XData<T>, kind: ProductKind) -> Result<XData<T>> {
        let out = XData::uninit(x.app(), "ComplexElementProd", &Self::output_shape(x.shape(), y.shape())?)?;
        ComplexElementProd::new(x, y, &out, kind).run()?;
        Ok(out)
    }

    /// The output shape: `x`'s, which `y` must broadcast to.
    ///
    /// ```
    /// use cliper::ComplexElementProd;
    /// use num_complex::Complex32;
    /// assert_eq!(ComplexElementProd::<Complex32>::output_shape(&[4, 8, 8], &[8, 8])?, vec![4, 8, 8]);
    /// assert!(ComplexElementProd::<Complex32>::output_shape(&[8, 8], &[4, 8, 8]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(x: &[usize], y: &[usize]) -> Result<Vec<usize>> {
        broadcast_to("ComplexElementProd", x, y)
    }

    /// The kernel `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<ElementwiseStrategy> {
        self.plan.as_ref().map(EwPlan::strategy)
    }
}

impl<T: ComplexElement> Process for ComplexElementProd<T> {
    fn name(&self) -> &str {
        "ComplexElementProd"
    }

    fn init(&mut self) -> Result<()> {
        let op = match self.kind {
            ProductKind::Plain => EwOp::Mul,
            ProductKind::ConjugateSecond => EwOp::MulConj,
        };
        self.plan.set(EwPlan::new(self.name(), op, &self.x, Some(&self.y), &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("ComplexElementProd")?;
        plan.launch(&self.x, &self.y, &self.out, T::from_c64(Default::default()))
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
