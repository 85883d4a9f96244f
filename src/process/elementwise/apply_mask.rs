//! [`ApplyMask`]: k-space sampling masks.

use super::plan::{ElementwiseStrategy, EwOp, EwPlan, broadcast_to};
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// `out = x · mask` with a real mask (1 where sampled, 0 elsewhere, or any weights) broadcast to `x`'s shape:
/// a `[y, x]` mask applies to every frame and coil of `[frames, coils, y, x]` k-space. `out` may be `x`.
///
/// ```
/// use cliper::{ApplyMask, ClApp, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let k = XData::from_slice(&app, &[2, 3], &[C::new(1.0, 2.0); 6])?; // 2 coils, 3 samples
/// let mask = XData::from_slice(&app, &[3], &[1.0f32, 0.0, 1.0])?;
/// ApplyMask::new(&k, &mask, &k).run()?; // in place
/// let z = C::new(0.0, 0.0);
/// assert_eq!(k.to_vec()?, vec![C::new(1.0, 2.0), z, C::new(1.0, 2.0), C::new(1.0, 2.0), z, C::new(1.0, 2.0)]);
/// assert_eq!(ApplyMask::apply(&k, &mask)?.shape(), &[2, 3]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct ApplyMask<T: ComplexElement> {
    x: XData<T>,
    mask: XData<T::Real>,
    out: XData<T>,
    plan: Prepared<EwPlan>,
}

impl<T: ComplexElement> ApplyMask<T> {
    /// `out = x · mask`.
    pub fn new(x: &XData<T>, mask: &XData<T::Real>, out: &XData<T>) -> ApplyMask<T> {
        ApplyMask { x: x.clone(), mask: mask.clone(), out: out.clone(), plan: Prepared::default() }
    }

    /// Allocates the output, masks `x` into it once and returns it.
    pub fn apply(x: &XData<T>, mask: &XData<T::Real>) -> Result<XData<T>> {
        let out = XData::uninit(x.app(), "ApplyMask", &Self::output_shape(x.shape(), mask.shape())?)?;
        ApplyMask::new(x, mask, &out).run()?;
        Ok(out)
    }

    /// The output shape: `x`'s, which the mask must broadcast to.
    ///
    /// ```
    /// use cliper::ApplyMask;
    /// assert_eq!(ApplyMask::<num_complex::Complex32>::output_shape(&[8, 64, 64], &[64, 64])?, vec![8, 64, 64]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(x: &[usize], mask: &[usize]) -> Result<Vec<usize>> {
        broadcast_to("ApplyMask", x, mask)
    }

    /// The kernel `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<ElementwiseStrategy> {
        self.plan.as_ref().map(EwPlan::strategy)
    }
}

impl<T: ComplexElement> Process for ApplyMask<T> {
    fn name(&self) -> &str {
        "ApplyMask"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(EwPlan::new(self.name(), EwOp::Mask, &self.x, Some(&self.mask), &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("ApplyMask")?;
        plan.launch(&self.x, &self.mask, &self.out, T::from_c64(Default::default()))
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
