//! [`CoilSum`]: the sum over the coil axis, optionally weighted by conjugated sensitivity maps.

use super::coil_plan::{CoilMode, CoilPlan, CoilStrategy};
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::process::{Prepared, Process};

/// The parameters of a [`CoilSum`]: the coil axis and, for the SENSE-style combination, the sensitivity maps
/// `[coils, spatial…]` whose conjugates weight the coils. For k-space data the axis is
/// [`crate::KData::coil_axis`].
///
/// ```
/// use cliper::{ClApp, CoilParams, XData};
/// use num_complex::Complex32;
/// let app = ClApp::new()?;
/// let maps = XData::<Complex32>::zeros(&app, &[8, 64, 64])?;
/// let p = CoilParams::new(1).maps(&maps);
/// assert_eq!((p.coil_axis(), p.has_maps()), (1, true));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone)]
pub struct CoilParams<T: ComplexElement> {
    coil_axis: usize,
    maps: Option<XData<T>>,
}

impl<T: ComplexElement> CoilParams<T> {
    /// The plain sum over `coil_axis`.
    pub fn new(coil_axis: usize) -> CoilParams<T> {
        CoilParams { coil_axis, maps: None }
    }

    /// Weight each coil by the conjugate of its sensitivity map (`[coils, spatial…]`).
    pub fn maps(mut self, maps: &XData<T>) -> CoilParams<T> {
        self.maps = Some(maps.clone());
        self
    }

    /// The coil axis.
    pub fn coil_axis(&self) -> usize {
        self.coil_axis
    }

    /// Whether sensitivity maps weight the sum.
    pub fn has_maps(&self) -> bool {
        self.maps.is_some()
    }
}

/// `out[f, p] = Σ_c x[f, c, p]` (OpenCLIPER's XImageSum), or with sensitivity maps
/// `out[f, p] = Σ_c x[f, c, p] · conj(s[c, p])` — the conjugate product and the coil sum in one kernel, one pass
/// over the data (the SENSE-style coil combination of [`super::SimpleMRIRecon`]). `x` is `[frames…, coils,
/// spatial…]`, `out` the same without the coil axis, maps `[coils, spatial…]`.
///
/// ```
/// use cliper::{ClApp, CoilParams, CoilSum, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// // 2 coils × 2 pixels
/// let x = XData::from_slice(&app, &[2, 2], &[C::new(1.0, 0.0), C::new(2.0, 0.0), C::new(0.0, 1.0), C::new(0.0, 2.0)])?;
/// let maps = XData::from_slice(&app, &[2, 2], &[C::new(1.0, 0.0), C::new(1.0, 0.0), C::new(0.0, 1.0), C::new(0.0, 1.0)])?;
/// let out = CoilSum::apply(&x, CoilParams::new(0).maps(&maps))?;
/// assert_eq!(out.to_vec()?, vec![C::new(2.0, 0.0), C::new(4.0, 0.0)]); // 1 + i·(−i), 2 + 2i·(−i)
/// CoilSum::new(&x, &out, CoilParams::new(0)).run()?; // the plain sum
/// assert_eq!(out.to_vec()?, vec![C::new(1.0, 1.0), C::new(2.0, 2.0)]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct CoilSum<T: ComplexElement> {
    x: XData<T>,
    out: XData<T>,
    params: CoilParams<T>,
    plan: Prepared<CoilPlan<T, T>>,
}

impl<T: ComplexElement> CoilSum<T> {
    /// The sum `params` describe of `x` into `out` (`x`'s shape without the coil axis).
    pub fn new(x: &XData<T>, out: &XData<T>, params: CoilParams<T>) -> CoilSum<T> {
        CoilSum { x: x.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, sums `x` into it once and returns it.
    pub fn apply(x: &XData<T>, params: CoilParams<T>) -> Result<XData<T>> {
        let out = XData::uninit(x.app(), "CoilSum", &Self::output_shape(x.shape(), &params)?)?;
        CoilSum::new(x, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: `shape` without the coil axis.
    ///
    /// ```
    /// use cliper::{CoilParams, CoilSum};
    /// use num_complex::Complex32;
    /// assert_eq!(CoilSum::<Complex32>::output_shape(&[3, 8, 64, 64], &CoilParams::new(1))?, vec![3, 64, 64]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &CoilParams<T>) -> Result<Vec<usize>> {
        without_coils("CoilSum", shape, params.coil_axis)
    }

    /// How `init` planned the combination; `None` before `init`.
    pub fn strategy(&self) -> Option<CoilStrategy> {
        self.plan.as_ref().map(CoilPlan::strategy)
    }
}

/// `shape` without `coil_axis`, or an error naming both.
pub(super) fn without_coils(op: &str, shape: &[usize], coil_axis: usize) -> Result<Vec<usize>> {
    if coil_axis >= shape.len() {
        return Err(Error::axis(format!("{op} (coil axis)"), coil_axis as isize, shape));
    }
    Ok(shape.iter().enumerate().filter(|&(k, _)| k != coil_axis).map(|(_, &n)| n).collect())
}

impl<T: ComplexElement> Process for CoilSum<T> {
    fn name(&self) -> &str {
        "CoilSum"
    }

    fn init(&mut self) -> Result<()> {
        let CoilParams { coil_axis, maps } = &self.params;
        let mode = if maps.is_some() { CoilMode::ConjSum } else { CoilMode::Sum };
        self.plan.set(CoilPlan::new("CoilSum", mode, &self.x, *coil_axis, maps.as_ref(), &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("CoilSum")?;
        plan.launch("CoilSum", &self.x, self.params.maps.as_ref(), &self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
