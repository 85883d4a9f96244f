//! [`L1WaveletSense`]: compressed-sensing SENSE reconstruction with an ℓ1 penalty on Daubechies-2 wavelet
//! coefficients, by FISTA — BART's `pics -l1 -r λ -i N`.

use super::sense::SenseOperator;
use crate::app::ClApp;
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::process::solve::{Fista, FistaParams, LinearOperator, largest_eigenvalue};
use crate::process::wavelet::WaveletThreshold;
use crate::process::{Prepared, Process};

/// The settings of an [`L1WaveletSense`] (and of the ℓ1 penalty of the non-Cartesian [`super::NufftSense`]): λ,
/// the iterations, the FISTA step τ (0.95), whether τ is divided by the largest eigenvalue of `AᴴA` (off; `pics
/// -e`) and whether the wavelet is cycle-spun as BART does (on; `pics -n` turns it off).
///
/// ```
/// let p = cliper::L1WaveletParams::new(0.005, 30).cycle_spinning(false).eigen_scaled(true);
/// assert_eq!((p.lambda, p.iterations, p.step, p.cycle_spinning, p.eigen_scaled), (0.005, 30, 0.95, false, true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct L1WaveletParams {
    /// The weight λ of `|W x|₁`.
    pub lambda: f64,
    /// FISTA iterations.
    pub iterations: usize,
    /// FISTA's step τ.
    pub step: f64,
    /// Random circular shifts around the wavelet transform, drawn as BART draws them.
    pub cycle_spinning: bool,
    /// τ is divided by `AᴴA`'s largest eigenvalue ([`crate::largest_eigenvalue`], 30 power steps), as `pics -e`:
    /// what non-Cartesian data need, whose `AᴴA` is far from the unit norm that τ = 0.95 assumes.
    pub eigen_scaled: bool,
}

impl L1WaveletParams {
    /// λ and the iterations; τ = 0.95, cycle spinning on.
    pub fn new(lambda: f64, iterations: usize) -> L1WaveletParams {
        L1WaveletParams { lambda, iterations, step: 0.95, cycle_spinning: true, eigen_scaled: false }
    }

    /// The step τ.
    pub fn step(mut self, step: f64) -> L1WaveletParams {
        self.step = step;
        self
    }

    /// Cycle spinning on or off.
    pub fn cycle_spinning(mut self, on: bool) -> L1WaveletParams {
        self.cycle_spinning = on;
        self
    }

    /// τ divided by `AᴴA`'s largest eigenvalue (`pics -e`) or not.
    pub fn eigen_scaled(mut self, on: bool) -> L1WaveletParams {
        self.eigen_scaled = on;
        self
    }
}

/// How an [`L1WaveletSense`] runs, as `strategy()` reports it.
///
/// ```
/// let s = cliper::L1WaveletStrategy { iterations: 30, threshold: 0.0095, coefficients: 17515, mask_inferred: true };
/// assert!(s.to_string().contains("17515"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct L1WaveletStrategy {
    /// FISTA iterations.
    pub iterations: usize,
    /// The soft threshold λτ.
    pub threshold: f64,
    /// Wavelet coefficients of the image.
    pub coefficients: usize,
    /// Whether the sampling pattern is inferred from the samples.
    pub mask_inferred: bool,
}

impl std::fmt::Display for L1WaveletStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} FISTA iterations, Daubechies-2 soft threshold {} over {} coefficients, pattern {}",
            self.iterations,
            self.threshold,
            self.coefficients,
            if self.mask_inferred { "inferred" } else { "given" }
        )
    }
}

/// ℓ1-wavelet SENSE: approximately `argmin ½|A x − y|² + λ|W x|₁` for k-space `y` with maps (the
/// [`SenseOperator`] `A`, the k-space's mask or the samples that are not zero), `W` the Daubechies-2 transform
/// with BART's levels, by [`Fista`] in BART's order of steps with the prox [`WaveletThreshold`] (threshold λτ,
/// cycle spinning drawn as BART draws it). With BART: `bart pics -l1 -r λ -i N -w 1 kspace maps out` (`-w 1`: no
/// data scaling, or `k` divided by [`super::BartScaling`]'s estimate first for `pics` without `-w`; add `-n` and [`L1WaveletParams::cycle_spinning`]`(false)` to compare without spinning).
///
/// ```
/// use cliper::{KData, L1WaveletParams, L1WaveletSense, Process, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// // One coil, every sample, λ = 0: FISTA converges to the image the data encode.
/// let maps = XData::from_slice(&app, &[1, 16, 16], &[C::new(1.0, 0.0); 256])?;
/// let image: Vec<C> = (0..256).map(|i| C::new((i % 5) as f32, 0.0)).collect();
/// let k = XData::zeros(&app, &[1, 16, 16])?;
/// cliper::SenseOperator::new(&maps, None)?.forward(&XData::from_slice(&app, &[16, 16], &image)?, &k)?;
/// let k = KData::new(k, 2)?.with_sensitivity_maps(maps)?;
/// let out = L1WaveletSense::apply(&k, L1WaveletParams::new(0.0, 20))?;
/// let worst = out.to_vec()?.iter().zip(&image).map(|(a, b)| (a - b).norm()).fold(0.0, f32::max);
/// assert!(worst < 1e-4, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct L1WaveletSense<T: ComplexElement> {
    k: KData<T>,
    out: XData<T>,
    params: L1WaveletParams,
    plan: Prepared<Plan<T>>,
}

/// FISTA with the wavelet soft threshold for images of one shape: what [`L1WaveletSense`] and the
/// non-Cartesian [`super::NufftSense`] solve with.
pub(super) struct WaveletFista<T: ComplexElement> {
    prox: WaveletThreshold<T>,
    fista: Fista<T>,
    /// Wavelet coefficients of the image.
    pub(super) coefficients: usize,
    /// The step τ the solver runs with (divided by the eigenvalue when asked).
    pub(super) step: f64,
}

impl<T: ComplexElement> WaveletFista<T> {
    /// Power steps of the eigenvalue estimate, as BART's `estimate_maxeigenval`.
    const POWER_STEPS: usize = 30;

    /// The solver of `params` for `frames` images of `shape` (stored one after the other; one problem, as BART's
    /// `pics` runs frames) with `normal` = `AᴴA` (refuses a λ that is negative or not finite, naming `op`). With [`L1WaveletParams::eigen_scaled`] τ is divided by `normal`'s largest
    /// eigenvalue; with `guard` that eigenvalue is estimated in any case, and a τ that makes FISTA diverge (τ·λ_max
    /// ≥ 2: BART's `pics -t` without `-e` or `-s` writes NaN then) is refused.
    pub(super) fn new(
        op: &str,
        app: &ClApp,
        frames: usize,
        shape: &[usize],
        params: L1WaveletParams,
        normal: &mut dyn LinearOperator<T>,
        guard: bool,
    ) -> Result<WaveletFista<T>> {
        let batch: Vec<usize> = if frames == 1 { shape.to_vec() } else { [&[frames][..], shape].concat() };
        if !(params.lambda.is_finite() && params.lambda >= 0.0) {
            return Err(Error::invalid(op, format!("λ = {} must be finite and ≥ 0", params.lambda)));
        }
        let eigenvalue = if params.eigen_scaled || guard {
            Some(largest_eigenvalue(normal, app, &batch, Self::POWER_STEPS)?)
        } else {
            None
        };
        let step = match eigenvalue {
            Some(e) if params.eigen_scaled && e > 0.0 => params.step / e,
            _ => params.step,
        };
        if let Some(e) = eigenvalue.filter(|e| guard && step * e >= 2.0) {
            return Err(Error::invalid(
                op,
                format!(
                    "FISTA's step {step} diverges: AᴴA's largest eigenvalue is {e:.4} and step × eigenvalue must stay below \
                     2; scale the step by the eigenvalue (pics -e; L1WaveletParams::eigen_scaled) or give one below \
                     {:.4e} (pics -s)",
                    2.0 / e
                ),
            ));
        }
        let prox = WaveletThreshold::with_frames(app, frames, shape, params.lambda * step, params.cycle_spinning)?;
        let coefficients = crate::process::wavelet::Wavelet::<T>::output_shape(
            shape,
            &crate::process::wavelet::WaveletParams::analysis(),
        )?
        .first()
        .copied()
        .unwrap_or(0)
            * frames;
        let fista = Fista::new(app, &batch, FistaParams::new(params.iterations).step(step))?;
        Ok(WaveletFista { prox, fista, coefficients, step })
    }

    /// Enqueues the iterations for `rhs = Aᴴ y` into `out`, with `normal` applying `AᴴA`.
    pub(super) fn solve(&mut self, normal: &mut dyn LinearOperator<T>, rhs: &XData<T>, out: &XData<T>) -> Result<()> {
        self.fista.solve(normal, &mut self.prox, rhs, out)
    }
}

struct Plan<T: ComplexElement> {
    sense: SenseOperator<T>,
    solver: WaveletFista<T>,
    rhs: XData<T>,
    infer_mask: bool,
}

impl<T: ComplexElement> L1WaveletSense<T> {
    /// Reconstructs `k` (`[frames…, coils, spatial…]`, with maps; frames are one problem, as BART's `pics` runs
    /// them) into `out` (`[frames…, spatial…]`, packed).
    pub fn new(k: &KData<T>, out: &XData<T>, params: L1WaveletParams) -> L1WaveletSense<T> {
        L1WaveletSense { k: k.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the image, reconstructs once and returns it.
    pub fn apply(k: &KData<T>, params: L1WaveletParams) -> Result<XData<T>> {
        let out = XData::uninit(k.as_xdata().app(), "L1WaveletSense", &Self::output_shape(k)?)?;
        L1WaveletSense::new(k, &out, params).run()?;
        Ok(out)
    }

    /// The image shape of `k`: `[frames…, spatial…]` (its spatial axes for one frame).
    pub fn output_shape(k: &KData<T>) -> Result<Vec<usize>> {
        super::cg_sense::CgSense::output_shape(k)
    }

    /// How it runs, once initialised.
    pub fn strategy(&self) -> Option<L1WaveletStrategy> {
        let plan = self.plan.as_ref()?;
        Some(L1WaveletStrategy {
            iterations: self.params.iterations,
            threshold: self.params.lambda * plan.solver.step,
            coefficients: plan.solver.coefficients,
            mask_inferred: plan.infer_mask,
        })
    }
}

impl<T: ComplexElement> Process for L1WaveletSense<T> {
    fn name(&self) -> &str {
        "L1WaveletSense"
    }

    fn init(&mut self) -> Result<()> {
        let op = "L1WaveletSense";
        let (sense, infer_mask) = super::cg_sense::sense_for(op, &self.k, &self.out)?;
        let app = self.out.app();
        let shape = sense.image_shape().to_vec();
        if self.params.eigen_scaled {
            // The sampling pattern may be inferred at launch, after the solver's step is fixed.
            return Err(Error::invalid(
                op,
                "eigen_scaled is for non-Cartesian data (NufftSense); with normalised maps a Cartesian AᴴA has \
                 eigenvalues ≤ 1 and τ = 0.95 converges",
            ));
        }
        let mut sense = sense;
        let (frames, spatial) = (sense.frames(), sense.spatial_shape().to_vec());
        let solver = WaveletFista::new(op, app, frames, &spatial, self.params, &mut sense, false)?;
        let rhs = XData::uninit(app, op, &shape)?;
        self.plan.set(Plan { sense, solver, rhs, infer_mask });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let k = self.k.as_xdata().contiguous()?;
        let out = self.out.clone();
        let plan = self.plan.get("L1WaveletSense")?;
        if plan.infer_mask {
            plan.sense.mask_from(&k)?;
        }
        plan.sense.adjoint(&k, &plan.rhs)?;
        let Plan { sense, solver, rhs, .. } = plan;
        solver.solve(sense, rhs, &out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
