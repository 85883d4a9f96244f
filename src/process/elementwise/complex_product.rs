//! [`ComplexElementProd`]: element-wise complex products, optionally with the second operand conjugated.

use super::plan::{EwOp, EwPlan};
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// `out = x ⊙ y` or `out = x ⊙ conj(y)` element by element, with `y` broadcast to `x`'s shape by numpy's
/// rules — so coil sensitivity maps `[coils, y, x]` multiply k-space or images `[frames, coils, y, x]` without
/// copies. `out` may be `x` itself (in place).
///
/// ```
/// use cliper::{ClApp, ComplexElementProd, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 2], &[C::new(1.0, 1.0), C::new(2.0, 0.0), C::new(0.0, 1.0), C::new(3.0, 0.0)])?;
/// let maps = XData::from_slice(&app, &[2], &[C::new(0.0, 1.0), C::new(2.0, 0.0)])?; // broadcast over rows
/// let out = XData::zeros(&app, &[2, 2])?;
/// let mut p = ComplexElementProd::new(&x, &maps, &out).conjugate(true);
/// p.init()?;
/// p.launch()?;
/// // (1+i)·conj(i) = 1−i, 2·2 = 4, i·(−i) = 1, 3·2 = 6
/// assert_eq!(out.to_vec()?, vec![C::new(1.0, -1.0), C::new(4.0, 0.0), C::new(1.0, 0.0), C::new(6.0, 0.0)]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ComplexElementProd<T: ComplexElement> {
    x: XData<T>,
    y: XData<T>,
    out: XData<T>,
    conjugate: bool,
    plan: Prepared<EwPlan>,
}

impl<T: ComplexElement> ComplexElementProd<T> {
    /// `out = x ⊙ y`.
    pub fn new(x: &XData<T>, y: &XData<T>, out: &XData<T>) -> ComplexElementProd<T> {
        ComplexElementProd { x: x.clone(), y: y.clone(), out: out.clone(), conjugate: false, plan: Prepared::default() }
    }

    /// Conjugate `y` (`out = x ⊙ conj(y)`), as OpenCLIPER's ComplexElementProd does with its conjugate flag.
    pub fn conjugate(mut self, conjugate: bool) -> ComplexElementProd<T> {
        self.conjugate = conjugate;
        self
    }
}

impl<T: ComplexElement> Process for ComplexElementProd<T> {
    fn name(&self) -> &str {
        "ComplexElementProd"
    }

    fn init(&mut self) -> Result<()> {
        let op = if self.conjugate { EwOp::MulConj } else { EwOp::Mul };
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
