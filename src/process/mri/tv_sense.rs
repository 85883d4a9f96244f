//! [`TvSense`]: SENSE reconstruction with an isotropic total-variation penalty, by ADMM — BART's `pics -R
//! T:7:0:λ -i N`.

use super::sense::SenseOperator;
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::Result;
use crate::process::solve::{TvAdmm, TvParams};
use crate::process::{Prepared, Process};

/// How a [`TvSense`] runs, as `strategy()` reports it.
///
/// ```
/// let s = cliper::TvStrategy { cg_budget: 50, rho: 0.5, inner_iterations: 10, mask_inferred: false };
/// assert!(s.to_string().contains("ρ 0.5"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct TvStrategy {
    /// Inner CG iterations in all.
    pub cg_budget: usize,
    /// ADMM's ρ.
    pub rho: f64,
    /// CG iterations per x-update, at most.
    pub inner_iterations: usize,
    /// Whether the sampling pattern is inferred from the samples.
    pub mask_inferred: bool,
}

impl std::fmt::Display for TvStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ADMM (ρ {}) until {} CG iterations, at most {} per x-update; pattern {}",
            self.rho,
            self.cg_budget,
            self.inner_iterations,
            if self.mask_inferred { "inferred" } else { "given" }
        )
    }
}

/// TV-SENSE: approximately `argmin ½|A x − y|² + λ Σ_r |(G x)(r)|₂` for k-space `y` with maps (the
/// [`SenseOperator`] `A`, its mask or the samples that are not zero), `G` the periodic backward difference along
/// the image's axes, by [`TvAdmm`] with BART's defaults. With BART: `bart pics -R T:7:0:λ -i N -w 1 kspace maps
/// out` (for a 2-D image; `N` counts inner CG iterations, as BART's `-i` does for ADMM); without `-w`, divide `k`
/// by [`super::BartScaling`]'s estimate first.
///
/// ```
/// use cliper::{KData, Process, TvParams, TvSense, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// // One coil, every sample, a tiny λ: the image the data encode.
/// let maps = XData::from_slice(&app, &[1, 16, 16], &[C::new(1.0, 0.0); 256])?;
/// let image: Vec<C> = (0..256).map(|i| C::new(if i % 16 < 8 { 1.0 } else { 0.0 }, 0.0)).collect();
/// let k = XData::zeros(&app, &[1, 16, 16])?;
/// cliper::SenseOperator::new(&maps, None)?.forward(&XData::from_slice(&app, &[16, 16], &image)?, &k)?;
/// let k = KData::new(k, 2)?.with_sensitivity_maps(maps)?;
/// let out = TvSense::apply(&k, TvParams::new(1e-6, 100))?;
/// let worst = out.to_vec()?.iter().zip(&image).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
/// assert!(worst < 1e-3, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct TvSense<T: ComplexElement> {
    k: KData<T>,
    out: XData<T>,
    params: TvParams,
    plan: Prepared<Plan<T>>,
}

struct Plan<T: ComplexElement> {
    sense: SenseOperator<T>,
    admm: TvAdmm<T>,
    rhs: XData<T>,
    infer_mask: bool,
}

impl<T: ComplexElement> TvSense<T> {
    /// Reconstructs `k` (one frame, with maps) into `out` (`[spatial…]`, contiguous).
    pub fn new(k: &KData<T>, out: &XData<T>, params: TvParams) -> TvSense<T> {
        TvSense { k: k.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the image, reconstructs once and returns it.
    pub fn apply(k: &KData<T>, params: TvParams) -> Result<XData<T>> {
        let out = XData::uninit(k.as_xdata().app(), "TvSense", &Self::output_shape(k)?)?;
        TvSense::new(k, &out, params).run()?;
        Ok(out)
    }

    /// The image shape of `k`: its spatial axes (one frame).
    pub fn output_shape(k: &KData<T>) -> Result<Vec<usize>> {
        super::cg_sense::CgSense::output_shape(k)
    }

    /// How it runs, once initialised.
    pub fn strategy(&self) -> Option<TvStrategy> {
        let plan = self.plan.as_ref()?;
        Some(TvStrategy {
            cg_budget: self.params.iterations,
            rho: self.params.rho,
            inner_iterations: self.params.inner_iterations,
            mask_inferred: plan.infer_mask,
        })
    }
}

impl<T: ComplexElement> Process for TvSense<T> {
    fn name(&self) -> &str {
        "TvSense"
    }

    fn init(&mut self) -> Result<()> {
        let op = "TvSense";
        let (sense, infer_mask) = super::cg_sense::sense_for(op, &self.k, &self.out)?;
        let app = self.out.app();
        let shape = sense.image_shape().to_vec();
        let admm = TvAdmm::with_frames(app, sense.frames(), sense.spatial_shape(), self.params)?;
        let rhs = XData::uninit(app, op, &shape)?;
        self.plan.set(Plan { sense, admm, rhs, infer_mask });
        Ok(())
    }

    /// Enqueues the reconstruction; each ADMM iteration waits for the device once (for its CG count).
    fn launch(&mut self) -> Result<()> {
        let k = self.k.as_xdata().contiguous()?;
        let out = self.out.clone();
        let plan = self.plan.get("TvSense")?;
        if plan.infer_mask {
            plan.sense.mask_from(&k)?;
        }
        plan.sense.adjoint(&k, &plan.rhs)?;
        let Plan { sense, admm, rhs, .. } = plan;
        admm.solve(sense, rhs, &out).map(|_| ())
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
