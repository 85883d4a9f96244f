//! [`NormN`]: the p-norm of an array, or of each line along one axis.

use super::reduce_plan::{ReducePlan, Reduction};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Which norm [`NormN`] computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormOrder {
    /// `‖x‖_p = (Σ |xᵢ|^p)^(1/p)` for a real `p ≥ 1` (integer or not); `P(f64::INFINITY)` is [`NormOrder::Inf`].
    P(f64),
    /// `‖x‖_∞ = max |xᵢ|`.
    Inf,
}

impl NormOrder {
    /// The order as a number (`f64::INFINITY` for [`NormOrder::Inf`]), or an error naming a `p` below 1 or NaN.
    ///
    /// ```
    /// use cliper::NormOrder;
    /// assert_eq!(NormOrder::P(1.5).p()?, 1.5);
    /// assert_eq!(NormOrder::Inf.p()?, f64::INFINITY);
    /// assert!(NormOrder::P(0.5).p().unwrap_err().to_string().contains("0.5"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn p(self) -> Result<f64> {
        match self {
            NormOrder::Inf => Ok(f64::INFINITY),
            NormOrder::P(p) if p >= 1.0 => Ok(p),
            NormOrder::P(p) => Err(Error::invalid(
                "NormN",
                format!("the norm order p must be at least 1 (or NormOrder::Inf), got p = {p}"),
            )),
        }
    }
}

/// The p-norm of real or complex data (|z| of a complex element is `hypot(re, im)`), over the whole array
/// (output shape `[]`) or along one axis (output: the input's shape without that axis — per row, per frame,
/// per coil). The output holds the real type and stays on the device, so a chain can go on using it;
/// `to_vec()` reads the number.
///
/// - Tree reduction in local memory across as many work-groups as fill the device, then a short second pass;
///   no float atomics, any length.
/// - Safe from overflow and underflow: the kernels keep the largest |xᵢ| seen as a scale and sum
///   `(|xᵢ|/scale)^p`, so `[1e30, 1e30]` in f32 gives 1.414e30 and p = 1000 works.
/// - NaN anywhere gives NaN; otherwise ∞ anywhere gives ∞.
///
/// ```
/// use cliper::{ClApp, NormN, NormOrder, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 2], &[3.0f32, 4.0, 1e30, 1e30])?;
/// let all = NormN::apply(&x, NormOrder::P(2.0))?;      // shape []
/// assert!((all.to_vec()?[0] / 1.4142135e30 - 1.0).abs() < 1e-6);
/// let rows = NormN::apply_along(&x, 1, NormOrder::P(2.0))?; // one norm per row
/// assert_eq!(rows.to_vec()?[0], 5.0);
/// assert_eq!(NormN::apply(&x, NormOrder::Inf)?.to_vec()?, vec![1e30]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct NormN<T: Element> {
    x: XData<T>,
    out: XData<T::Real>,
    order: NormOrder,
    axis: Option<usize>,
    plan: Prepared<ReducePlan<T, T::Real>>,
}

impl<T: Element> NormN<T> {
    /// The norm of all of `x` into `out` (shape `[]`).
    pub fn new(x: &XData<T>, out: &XData<T::Real>, order: NormOrder) -> NormN<T> {
        NormN { x: x.clone(), out: out.clone(), order, axis: None, plan: Prepared::default() }
    }

    /// Norms along `axis` instead: `out` has `x`'s shape without that axis.
    pub fn along(mut self, axis: usize) -> NormN<T> {
        self.axis = Some(axis);
        self
    }

    /// How `init` planned the reduction: `"groups"`, `"groups+partials"`, `"lanes"` or `"none"`, prefixed by
    /// `"gather+"` when a strided input is first copied into contiguous scratch. `None` before `init`.
    pub fn strategy(&self) -> Option<String> {
        self.plan.as_ref().map(|p| p.strategy())
    }

    /// Allocates a `[]` output, computes the norm of all of `x` into it once and returns it.
    pub fn apply(x: &XData<T>, order: NormOrder) -> Result<XData<T::Real>> {
        let out = XData::uninit(x.app(), "NormN", &[])?;
        let mut n = NormN::new(x, &out, order);
        n.init()?;
        n.launch()?;
        Ok(out)
    }

    /// Allocates the output, computes the norms along `axis` into it once and returns it.
    pub fn apply_along(x: &XData<T>, axis: usize, order: NormOrder) -> Result<XData<T::Real>> {
        if axis >= x.ndim() {
            return Err(Error::invalid(
                "NormN",
                format!("axis {axis} does not exist in an array of shape {:?} ({} axes)", x.shape(), x.ndim()),
            ));
        }
        let shape: Vec<usize> = x.shape().iter().enumerate().filter(|&(k, _)| k != axis).map(|(_, &n)| n).collect();
        let out = XData::uninit(x.app(), "NormN", &shape)?;
        let mut n = NormN::new(x, &out, order).along(axis);
        n.init()?;
        n.launch()?;
        Ok(out)
    }
}

impl<T: Element> Process for NormN<T> {
    fn name(&self) -> &str {
        "NormN"
    }

    fn init(&mut self) -> Result<()> {
        let p = self.order.p()?;
        let plan = ReducePlan::new("NormN", Reduction::Norm { p }, &self.x, None, self.axis, &self.out)?;
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("NormN")?;
        plan.launch(&self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
