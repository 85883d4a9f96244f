//! [`CgSense`]: iterative SENSE reconstruction of undersampled Cartesian k-space by conjugate gradients on the
//! normal equations, `(AᴴA + λI) x = Aᴴ y` (BART's `pics -l2 -r λ -i N`).

use super::sense::SenseOperator;
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::process::fft::FftStrategy;
use crate::process::solve::{CgParams, ConjugateGradient};
use crate::process::{Prepared, Process};

/// How a [`CgSense`] runs, as `strategy()` reports it: the problem's size, the solver's settings, where the
/// sampling pattern comes from, and the FFT over the coil images.
///
/// ```
/// use cliper::{CgParams, CgSense, KData, Process, XData};
/// use num_complex::Complex32;
/// let app = cliper::ClApp::new()?;
/// let maps = XData::<Complex32>::zeros(&app, &[4, 32, 24])?;
/// let k = KData::new(XData::zeros(&app, &[4, 32, 24])?, 2)?.with_sensitivity_maps(maps)?;
/// let mut recon = CgSense::new(&k, &XData::zeros(&app, &[32, 24])?, CgParams::new(20).lambda(0.5));
/// recon.init()?;
/// let s = recon.strategy().unwrap();
/// assert_eq!((s.coils, s.positions, s.iterations, s.mask_inferred), (4, 768, 20, true));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct CgSenseStrategy {
    /// Coils.
    pub coils: usize,
    /// Image positions (the spatial axes' product).
    pub positions: usize,
    /// CG iterations.
    pub iterations: usize,
    /// λ.
    pub lambda: f64,
    /// Whether the pattern is inferred from the k-space at each launch (no mask attached).
    pub mask_inferred: bool,
    /// The batched FFT over the coil images (the inverse one is planned alike).
    pub fft: FftStrategy,
}

impl std::fmt::Display for CgSenseStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} CG iterations (λ {}) on AᴴA over {} coils × {} positions, pattern {}; FFT: {}",
            self.iterations,
            self.lambda,
            self.coils,
            self.positions,
            if self.mask_inferred { "inferred from the samples" } else { "given" },
            self.fft
        )
    }
}

/// CG-SENSE: the image `x` that minimises `|A x − y|² + λ|x|²` for k-space `y` (a [`KData`] with sensitivity
/// maps), by [`ConjugateGradient`] from `x₀ = 0` on `(AᴴA + λI) x = Aᴴ y`, where `A` is the [`SenseOperator`] of
/// the maps and the sampling mask: the k-space's own mask ([`KData::with_sampling_mask`]) or, without one, the
/// samples that are not zero in any coil (as BART's `pics` infers the pattern). k-space is taken as stored
/// centred (`A` uses the centred unitary FFT, as BART does); the image has the maps' spatial shape.
///
/// With BART: `bart pics -l2 -r λ -i N -w 1 kspace maps out` solves the same equations (`-w 1`: BART otherwise
/// divides k-space by its own scaling estimate first; [`super::BartScaling`] computes it and divides `k` by it,
/// which makes this `pics` without `-w`). Iterations are enqueued without host round trips;
/// [`CgSense::residuals`] gives `|r_k| / |r₀|` after a run.
///
/// ```
/// use cliper::{CgParams, CgSense, KData, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// // Two coils, 8×8, every sample taken: CG-SENSE (λ = 0) gives back what the maps encoded.
/// let maps: Vec<C> = (0..128).map(|i| C::from_polar(0.7, i as f32 * 0.1)).collect();
/// let image: Vec<C> = (0..64).map(|i| C::new((i % 7) as f32, (i % 3) as f32)).collect();
/// let maps = XData::from_slice(&app, &[2, 8, 8], &maps)?;
/// let truth = XData::from_slice(&app, &[8, 8], &image)?;
/// let k = XData::zeros(&app, &[2, 8, 8])?;
/// cliper::SenseOperator::new(&maps, None)?.forward(&truth, &k)?;
/// let k = KData::new(k, 2)?.with_sensitivity_maps(maps)?;
/// let out = XData::zeros(&app, &[8, 8])?;
/// let mut recon = CgSense::new(&k, &out, CgParams::new(10));
/// recon.run()?;
/// let worst = out.to_vec()?.iter().zip(&image).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
/// assert!(worst < 1e-4, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct CgSense<T: ComplexElement> {
    k: KData<T>,
    out: XData<T>,
    params: CgParams,
    plan: Prepared<Plan<T>>,
}

/// The operator, the solver, the right-hand side `Aᴴ y`, and whether the mask is inferred at each launch.
struct Plan<T: ComplexElement> {
    sense: SenseOperator<T>,
    cg: ConjugateGradient<T>,
    rhs: XData<T>,
    infer_mask: bool,
}

impl<T: ComplexElement> CgSense<T> {
    /// Reconstructs `k` (`[frames…, coils, spatial…]`, with maps) into `out` (`[frames…, spatial…]`, packed).
    /// Frames share the maps and are solved as one problem (one CG over all of them: BART's `pics` on data with
    /// frames past the coil dimension).
    pub fn new(k: &KData<T>, out: &XData<T>, params: CgParams) -> CgSense<T> {
        CgSense { k: k.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the image, reconstructs `k` into it once and returns it.
    pub fn apply(k: &KData<T>, params: CgParams) -> Result<XData<T>> {
        let out = XData::uninit(k.as_xdata().app(), "CgSense", &Self::output_shape(k)?)?;
        CgSense::new(k, &out, params).run()?;
        Ok(out)
    }

    /// The image shape of `k`: `[frames…, spatial…]` (its spatial axes for one frame).
    pub fn output_shape(k: &KData<T>) -> Result<Vec<usize>> {
        Ok(k.frame_shape().iter().chain(k.spatial_shape()).copied().collect())
    }

    /// How it runs, once initialised.
    pub fn strategy(&self) -> Option<CgSenseStrategy> {
        let plan = self.plan.as_ref()?;
        Some(CgSenseStrategy {
            coils: plan.sense.coils(),
            positions: plan.sense.image_shape().iter().product(),
            iterations: self.params.iterations,
            lambda: self.params.lambda,
            mask_inferred: plan.infer_mask,
            fft: plan.sense.fft_strategy()?,
        })
    }

    /// After a run: the relative residual norms `|r_k| / |r₀|`, k = 0 … iterations (waits for the device).
    pub fn residuals(&self) -> Result<Vec<f64>> {
        match self.plan.as_ref() {
            Some(plan) => plan.cg.residuals(),
            None => Err(Error::NotInitialized { op: "CgSense".into() }),
        }
    }
}

impl<T: ComplexElement> Process for CgSense<T> {
    fn name(&self) -> &str {
        "CgSense"
    }

    fn init(&mut self) -> Result<()> {
        let op = "CgSense";
        let (sense, infer_mask) = sense_for(op, &self.k, &self.out)?;
        let app = self.out.app();
        let cg = ConjugateGradient::new(app, sense.image_shape(), self.params)?;
        let rhs = XData::uninit(app, op, sense.image_shape())?;
        self.plan.set(Plan { sense, cg, rhs, infer_mask });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let k = self.k.as_xdata().contiguous()?;
        let out = self.out.clone();
        let plan = self.plan.get("CgSense")?;
        if plan.infer_mask {
            plan.sense.mask_from(&k)?;
        }
        plan.sense.adjoint(&k, &plan.rhs)?;
        let Plan { sense, cg, rhs, .. } = plan;
        cg.solve(sense, rhs, &out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// The SENSE operator of `k` (one frame, with maps; its mask, or none to infer) for an image `out` of the maps'
/// spatial shape, and whether the mask is inferred: what every iterative reconstruction starts from.
pub(crate) fn sense_for<T: ComplexElement>(op: &str, k: &KData<T>, out: &XData<T>) -> Result<(SenseOperator<T>, bool)> {
    let maps = k.sensitivity_maps().ok_or_else(|| {
        Error::invalid(op, "the k-space has no sensitivity maps (attach them with KData::with_sensitivity_maps)")
    })?;
    let maps = maps.contiguous()?;
    let mask = k.sampling_mask().map(XData::contiguous).transpose()?;
    let sense = SenseOperator::with_frames(&maps, mask.as_ref(), k.frame_shape())?;
    if out.shape() != sense.image_shape() {
        return Err(Error::shape_because(op, sense.image_shape(), out.shape(), "an image of the maps' spatial shape"));
    }
    if !out.is_packed() {
        return Err(Error::invalid(
            op,
            "the output image must be contiguous from its buffer's start (XData::contiguous makes a copy)",
        ));
    }
    Ok((sense, mask.is_none()))
}
