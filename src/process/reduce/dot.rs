//! [`Dot`]: dot products of two arrays, whole or along one axis.

use super::reduce_plan::{ReducePlan, ReduceStrategy, reduced_shape};
use super::reduction::Reduction;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Whether [`Dot`] conjugates its first operand.
///
/// ```
/// use cliper::{Dot, DotKind, DotParams, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[2], &[1.0f64, 2.0])?;
/// // Real data: conjugation changes nothing.
/// assert_eq!(Dot::apply(&x, &x, DotParams::new(DotKind::Conjugated))?.to_vec()?, vec![5.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
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

/// The parameters of a [`Dot`]: conjugate the first operand or not, and optionally the axis to reduce along.
/// Default: [`DotKind::Plain`] over the whole arrays.
///
/// ```
/// use cliper::{DotKind, DotParams};
/// let p = DotParams::new(DotKind::Conjugated).along(0);
/// assert_eq!((p.kind(), p.axis()), (DotKind::Conjugated, Some(0)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DotParams {
    kind: DotKind,
    axis: Option<usize>,
    kernels_only: bool,
}

impl DotParams {
    /// Products of this kind over the whole arrays.
    pub fn new(kind: DotKind) -> DotParams {
        DotParams { kind, axis: None, kernels_only: false }
    }

    /// One product per line along `axis` instead: the output has the operands' shape without that axis.
    pub fn along(mut self, axis: usize) -> DotParams {
        self.axis = Some(axis);
        self
    }

    /// Whether the first operand is conjugated.
    pub fn kind(&self) -> DotKind {
        self.kind
    }

    /// The axis reduced along, or `None` for the whole arrays.
    pub fn axis(&self) -> Option<usize> {
        self.axis
    }

    /// Keeps the OpenCL kernels on a CPU device, where the planner otherwise sums on the host
    /// ([`crate::ReduceKernel::Host`]): for comparisons, and the kernels' own tests.
    ///
    /// ```
    /// use cliper::{Dot, DotParams, Process, ReduceKernel, XData};
    /// let app = cliper::ClApp::new()?;
    /// let x = XData::from_slice(&app, &[3], &[1.0f32, 2.0, 3.0])?;
    /// let out = XData::zeros(&app, &[])?;
    /// let mut dot = Dot::new(&x, &x, &out, DotParams::default().kernels_only(true));
    /// dot.run()?;
    /// assert_ne!(dot.strategy().unwrap().kernel, ReduceKernel::Host);
    /// assert_eq!(out.to_vec()?, vec![14.0]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn kernels_only(mut self, on: bool) -> DotParams {
        self.kernels_only = on;
        self
    }
}

/// The dot product of two arrays of the same shape (real or complex), over everything (output shape `[]`) or
/// along one axis (output: the shape without that axis — one product per row, per frame…). The result stays
/// on the device. Same tree reduction as [`super::NormN`]: any length, no atomics.
///
/// ```
/// use cliper::{ClApp, Dot, DotKind, DotParams, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2], &[C::new(0.0, 1.0), C::new(2.0, 0.0)])?;
/// let y = XData::from_slice(&app, &[2], &[C::new(0.0, 1.0), C::new(1.0, 1.0)])?;
/// assert_eq!(Dot::apply(&x, &y, DotParams::default())?.to_vec()?, vec![C::new(1.0, 2.0)]); // i·i + 2(1+i)
/// let inner = Dot::apply(&x, &y, DotParams::new(DotKind::Conjugated))?;
/// assert_eq!(inner.to_vec()?, vec![C::new(3.0, 2.0)]); // -i·i + 2(1+i)
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Dot<T: Element> {
    x: XData<T>,
    y: XData<T>,
    out: XData<T>,
    params: DotParams,
    plan: Prepared<ReducePlan<T, T>>,
}

impl<T: Element> Dot<T> {
    /// The products `params` describe of `x` and `y` into `out` (shape `[]`, or the shape without the axis).
    pub fn new(x: &XData<T>, y: &XData<T>, out: &XData<T>, params: DotParams) -> Dot<T> {
        Dot { x: x.clone(), y: y.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, computes the product(s) into it once and returns it.
    pub fn apply(x: &XData<T>, y: &XData<T>, params: DotParams) -> Result<XData<T>> {
        let out = XData::uninit(x.app(), "Dot", &Self::output_shape(x.shape(), y.shape(), &params)?)?;
        Dot::new(x, y, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: `[]`, or the operands' shape without the axis; the operands must have one shape.
    ///
    /// ```
    /// use cliper::{Dot, DotParams};
    /// assert_eq!(Dot::<f32>::output_shape(&[3, 7], &[3, 7], &DotParams::default().along(0))?, vec![7]);
    /// assert!(Dot::<f32>::output_shape(&[3, 7], &[7, 3], &DotParams::default()).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(x: &[usize], y: &[usize], params: &DotParams) -> Result<Vec<usize>> {
        if x != y {
            return Err(Error::shape("Dot", x, y));
        }
        reduced_shape("Dot", x, params.axis)
    }

    /// How `init` planned the reduction; `None` before `init`.
    pub fn strategy(&self) -> Option<ReduceStrategy> {
        self.plan.as_ref().map(ReducePlan::strategy)
    }
}

impl<T: Element> Process for Dot<T> {
    fn name(&self) -> &str {
        "Dot"
    }

    fn init(&mut self) -> Result<()> {
        let reduction = Reduction::Dot { conjugate_x: self.params.kind == DotKind::Conjugated && T::IS_COMPLEX };
        self.plan.set(ReducePlan::new(
            "Dot",
            reduction,
            &self.x,
            Some(&self.y),
            self.params.axis,
            &self.out,
            !self.params.kernels_only,
        )?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("Dot")?.launch(&self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
