//! [`RSoS`]: the root sum of squares over the coil axis.

use super::coil_plan::{CoilMode, CoilPlan};
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// `out[f, p] = √(Σ_c |x[f, c, p]|²)`: the magnitude coil combination that needs no sensitivity maps. `x` is
/// `[frames…, coils, spatial…]` (complex), `out` real, the same shape without the coil axis.
///
/// ```
/// use cliper::{ClApp, Process, RSoS, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 1], &[C::new(3.0, 0.0), C::new(0.0, 4.0)])?; // 2 coils, 1 pixel
/// let out = XData::<f32>::zeros(&app, &[1])?;
/// let mut p = RSoS::new(&x, 0, &out);
/// p.init()?;
/// p.launch()?;
/// assert_eq!(out.to_vec()?, vec![5.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct RSoS<T: ComplexElement> {
    x: XData<T>,
    coil_axis: usize,
    out: XData<T::Real>,
    plan: Prepared<CoilPlan<T, T::Real>>,
}

impl<T: ComplexElement> RSoS<T> {
    /// `out = √Σ |x|²` over axis `coil_axis`.
    pub fn new(x: &XData<T>, coil_axis: usize, out: &XData<T::Real>) -> RSoS<T> {
        RSoS { x: x.clone(), coil_axis, out: out.clone(), plan: Prepared::default() }
    }

    /// Over `k`'s coil axis.
    pub fn of(k: &KData<T>, out: &XData<T::Real>) -> RSoS<T> {
        RSoS::new(k.as_xdata(), k.as_xdata().ndim() - k.spatial_shape().len() - 1, out)
    }
}

impl<T: ComplexElement> Process for RSoS<T> {
    fn name(&self) -> &str {
        "RSoS"
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(CoilPlan::new("RSoS", CoilMode::Rsos, &self.x, self.coil_axis, None, &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("RSoS")?;
        plan.launch("RSoS", &self.x, None, &self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
