//! [`Dot`]: dot products of two arrays, whole or along one axis.

use super::reduce_plan::{ReducePlan, Reduction};
use crate::data::XData;
use crate::element::Element;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// Whether [`Dot`] conjugates its first operand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DotKind {
    /// `Σ xᵢ·yᵢ` (BLAS `dot` / `dotu`, numpy `dot` on vectors).
    #[default]
    Plain,
    /// `Σ conj(xᵢ)·yᵢ` (BLAS `dotc`, numpy `vdot`): the inner product ⟨x, y⟩, so ⟨x, x⟩ = ‖x‖². OpenCLIPER's
    /// thesis conjugated the second operand instead; cliper follows BLAS and numpy. The same as
    /// [`DotKind::Plain`] for real types.
    Conjugated,
}

/// The dot product of two arrays of the same shape (real or complex), over everything (output shape `[]`) or
/// along one axis (output: the shape without that axis — one product per row, per frame…). The result stays
/// on the device. Same tree reduction as [`super::NormN`]: any length, no atomics.
///
/// ```
/// use cliper::{ClApp, Dot, DotKind, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2], &[C::new(0.0, 1.0), C::new(2.0, 0.0)])?;
/// let y = XData::from_slice(&app, &[2], &[C::new(0.0, 1.0), C::new(1.0, 1.0)])?;
/// assert_eq!(Dot::apply(&x, &y, DotKind::Plain)?.to_vec()?, vec![C::new(1.0, 2.0)]);      // i·i + 2(1+i)
/// assert_eq!(Dot::apply(&x, &y, DotKind::Conjugated)?.to_vec()?, vec![C::new(3.0, 2.0)]); // -i·i + 2(1+i)
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Dot<T: Element> {
    x: XData<T>,
    y: XData<T>,
    out: XData<T>,
    kind: DotKind,
    axis: Option<usize>,
    plan: Prepared<ReducePlan<T, T>>,
}

impl<T: Element> Dot<T> {
    /// `Σ xᵢ·yᵢ` over all elements into `out` (shape `[]`).
    pub fn new(x: &XData<T>, y: &XData<T>, out: &XData<T>) -> Dot<T> {
        Dot {
            x: x.clone(),
            y: y.clone(),
            out: out.clone(),
            kind: DotKind::Plain,
            axis: None,
            plan: Prepared::default(),
        }
    }

    /// Conjugate x or not (default [`DotKind::Plain`]).
    pub fn kind(mut self, kind: DotKind) -> Dot<T> {
        self.kind = kind;
        self
    }

    /// Products along `axis` instead: `out` has the operands' shape without that axis.
    pub fn along(mut self, axis: usize) -> Dot<T> {
        self.axis = Some(axis);
        self
    }

    /// How `init` planned the reduction (see [`super::NormN::strategy`]); `None` before `init`.
    pub fn strategy(&self) -> Option<String> {
        self.plan.as_ref().map(|p| p.strategy())
    }

    /// Allocates a `[]` output, computes the dot product of all of `x` and `y` into it once and returns it.
    pub fn apply(x: &XData<T>, y: &XData<T>, kind: DotKind) -> Result<XData<T>> {
        let out = XData::uninit(x.app(), "Dot", &[])?;
        let mut d = Dot::new(x, y, &out).kind(kind);
        d.init()?;
        d.launch()?;
        Ok(out)
    }
}

impl<T: Element> Process for Dot<T> {
    fn name(&self) -> &str {
        "Dot"
    }

    fn init(&mut self) -> Result<()> {
        let reduction = Reduction::Dot { conjugate_x: self.kind == DotKind::Conjugated && T::IS_COMPLEX };
        self.plan.set(ReducePlan::new("Dot", reduction, &self.x, Some(&self.y), self.axis, &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("Dot")?;
        plan.launch(&self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
