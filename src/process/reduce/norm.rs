//! [`NormN`]: the p-norm of an array, or of each line along one axis.

use super::reduce_plan::{ReducePlan, ReduceStrategy, reduced_shape};
use super::reduction::Reduction;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// Which norm [`NormN`] computes.
///
/// ```
/// use cliper::{NormN, NormOrder, NormParams, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::from_slice(&app, &[3], &[3.0f32, -4.0, 0.0])?;
/// assert_eq!(NormN::apply(&x, NormParams::new(NormOrder::P(1.0)))?.to_vec()?, vec![7.0]);
/// assert_eq!(NormN::apply(&x, NormParams::new(NormOrder::Inf))?.to_vec()?, vec![4.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
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

/// The parameters of a [`NormN`]: the order and, optionally, the axis to reduce along. Default: the 2-norm
/// of the whole array.
///
/// ```
/// use cliper::{NormOrder, NormParams};
/// let rows = NormParams::new(NormOrder::P(1.0)).along(1);
/// assert_eq!((rows.order(), rows.axis()), (NormOrder::P(1.0), Some(1)));
/// assert_eq!(NormParams::default().order(), NormOrder::P(2.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormParams {
    order: NormOrder,
    axis: Option<usize>,
    kernels_only: bool,
}

impl Default for NormParams {
    fn default() -> Self {
        NormParams::new(NormOrder::P(2.0))
    }
}

impl NormParams {
    /// The norm of this order over the whole array.
    pub fn new(order: NormOrder) -> NormParams {
        NormParams { order, axis: None, kernels_only: false }
    }

    /// One norm per line along `axis` instead: the output has the input's shape without that axis.
    pub fn along(mut self, axis: usize) -> NormParams {
        self.axis = Some(axis);
        self
    }

    /// The order.
    pub fn order(&self) -> NormOrder {
        self.order
    }

    /// The axis reduced along, or `None` for the whole array.
    pub fn axis(&self) -> Option<usize> {
        self.axis
    }

    /// Keeps the OpenCL kernels on a CPU device, where the planner otherwise sums on the host
    /// ([`crate::ReduceKernel::Host`]): for comparisons, and the kernels' own tests.
    ///
    /// ```
    /// use cliper::{DeviceKind, NormN, NormParams, Process, ReduceKernel, XData};
    /// let app = cliper::ClApp::new()?;
    /// let x = XData::from_slice(&app, &[2], &[3.0f32, 4.0])?;
    /// let (a, b) = (XData::zeros(&app, &[])?, XData::zeros(&app, &[])?);
    /// let mut planned = NormN::new(&x, &a, NormParams::default());
    /// let mut kernels = NormN::new(&x, &b, NormParams::default().kernels_only(true));
    /// planned.run()?;
    /// kernels.run()?;
    /// let cpu = app.device().kind == DeviceKind::Cpu;
    /// assert_eq!(planned.strategy().unwrap().kernel == ReduceKernel::Host, cpu);
    /// assert_ne!(kernels.strategy().unwrap().kernel, ReduceKernel::Host);
    /// assert_eq!((a.to_vec()?, b.to_vec()?), (vec![5.0], vec![5.0]));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn kernels_only(mut self, on: bool) -> NormParams {
        self.kernels_only = on;
        self
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
/// use cliper::{ClApp, NormN, NormOrder, NormParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 2], &[3.0f32, 4.0, 1e30, 1e30])?;
/// let all = NormN::apply(&x, NormParams::default())?;      // the 2-norm, shape []
/// assert!((all.to_vec()?[0] / 1.4142135e30 - 1.0).abs() < 1e-6);
/// let rows = NormN::apply(&x, NormParams::default().along(1))?; // one norm per row
/// assert_eq!(rows.to_vec()?[0], 5.0);
/// assert_eq!(NormN::apply(&x, NormParams::new(NormOrder::Inf))?.to_vec()?, vec![1e30]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct NormN<T: Element> {
    x: XData<T>,
    out: XData<T::Real>,
    params: NormParams,
    plan: Prepared<ReducePlan<T, T::Real>>,
}

impl<T: Element> NormN<T> {
    /// The norm `params` describe of `x` into `out` (shape `[]`, or `x`'s shape without the axis).
    pub fn new(x: &XData<T>, out: &XData<T::Real>, params: NormParams) -> NormN<T> {
        NormN { x: x.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, computes the norm(s) into it once and returns it.
    pub fn apply(x: &XData<T>, params: NormParams) -> Result<XData<T::Real>> {
        let out = XData::uninit(x.app(), "NormN", &Self::output_shape(x.shape(), &params)?)?;
        NormN::new(x, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: `[]`, or `shape` without the axis reduced along.
    ///
    /// ```
    /// use cliper::{NormN, NormParams};
    /// assert_eq!(NormN::<f32>::output_shape(&[4, 5, 6], &NormParams::default().along(1))?, vec![4, 6]);
    /// assert!(NormN::<f32>::output_shape(&[4, 5], &NormParams::default().along(2)).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &NormParams) -> Result<Vec<usize>> {
        params.order.p()?;
        reduced_shape("NormN", shape, params.axis)
    }

    /// How `init` planned the reduction; `None` before `init`.
    pub fn strategy(&self) -> Option<ReduceStrategy> {
        self.plan.as_ref().map(ReducePlan::strategy)
    }
}

impl<T: Element> Process for NormN<T> {
    fn name(&self) -> &str {
        "NormN"
    }

    fn init(&mut self) -> Result<()> {
        let p = self.params.order.p()?;
        let plan = ReducePlan::new(
            "NormN",
            Reduction::Norm { p },
            &self.x,
            None,
            self.params.axis,
            &self.out,
            !self.params.kernels_only,
        )?;
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get("NormN")?.launch(&self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
