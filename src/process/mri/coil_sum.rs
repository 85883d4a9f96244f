//! [`CoilSum`]: the sum over the coil axis, optionally weighted by conjugated sensitivity maps.

use super::coil_plan::{CoilMode, CoilPlan};
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::{Prepared, Process};

/// `out[f, p] = Σ_c x[f, c, p]` (OpenCLIPER's XImageSum), or with sensitivity maps
/// `out[f, p] = Σ_c x[f, c, p] · conj(s[c, p])` — the conjugate product and the coil sum in one kernel, one pass
/// over the data (the SENSE-style coil combination of [`super::SimpleMRIRecon`]). `x` is `[frames…, coils,
/// spatial…]`, `out` the same without the coil axis, maps `[coils, spatial…]`.
///
/// ```
/// use cliper::{ClApp, CoilSum, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = ClApp::new()?;
/// // 2 coils × 2 pixels
/// let x = XData::from_slice(&app, &[2, 2], &[C::new(1.0, 0.0), C::new(2.0, 0.0), C::new(0.0, 1.0), C::new(0.0, 2.0)])?;
/// let maps = XData::from_slice(&app, &[2, 2], &[C::new(1.0, 0.0), C::new(1.0, 0.0), C::new(0.0, 1.0), C::new(0.0, 1.0)])?;
/// let out = XData::zeros(&app, &[2])?;
/// let mut p = CoilSum::new(&x, 0, &out).with_maps(&maps);
/// p.init()?;
/// p.launch()?;
/// assert_eq!(out.to_vec()?, vec![C::new(2.0, 0.0), C::new(4.0, 0.0)]); // 1 + i·(−i), 2 + 2i·(−i)
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct CoilSum<T: ComplexElement> {
    x: XData<T>,
    coil_axis: usize,
    maps: Option<XData<T>>,
    out: XData<T>,
    plan: Prepared<CoilPlan<T, T>>,
}

impl<T: ComplexElement> CoilSum<T> {
    /// `out = Σ over axis coil_axis of x`.
    pub fn new(x: &XData<T>, coil_axis: usize, out: &XData<T>) -> CoilSum<T> {
        CoilSum { x: x.clone(), coil_axis, maps: None, out: out.clone(), plan: Prepared::default() }
    }

    /// The sum over `k`'s coils (its samples, not its maps: see [`CoilSum::with_maps`]).
    pub fn of(k: &KData<T>, out: &XData<T>) -> CoilSum<T> {
        CoilSum::new(k.as_xdata(), k.as_xdata().ndim() - k.spatial_shape().len() - 1, out)
    }

    /// Weight each coil by the conjugate of its sensitivity map (`[coils, spatial…]`).
    pub fn with_maps(mut self, maps: &XData<T>) -> CoilSum<T> {
        self.maps = Some(maps.clone());
        self
    }
}

impl<T: ComplexElement> Process for CoilSum<T> {
    fn name(&self) -> &str {
        "CoilSum"
    }

    fn init(&mut self) -> Result<()> {
        let mode = if self.maps.is_some() { CoilMode::ConjSum } else { CoilMode::Sum };
        self.plan.set(CoilPlan::new("CoilSum", mode, &self.x, self.coil_axis, self.maps.as_ref(), &self.out)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("CoilSum")?;
        plan.launch("CoilSum", &self.x, self.maps.as_ref(), &self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
