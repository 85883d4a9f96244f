//! [`TvAdmm`]: total-variation regularised least squares, `min ½|A x − y|² + λ Σ_r |(G x)(r)|₂` (isotropic TV), by
//! ADMM as BART's `pics -R T:…` runs it: the x-update by warm-started conjugate gradients on `(AᴴA + ρGᴴG)`, the
//! z-update by the joint shrinkage of the gradient's components, the scaled dual u.

use super::cg::{CgParams, ConjugateGradient, LinearOperator};
use crate::app::{ClApp, Kernel};
use crate::data::{Launch, XData};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use num_complex::Complex;

/// The settings of a [`TvAdmm`]: λ, the budget of inner CG iterations (BART's `-i N` counts those, not ADMM
/// iterations: ADMM stops once more than N have run), ρ (0.5), the over-relaxation α (1.6), and the inner CG's
/// iterations per x-update (10) and relative tolerance (1e-3) — BART's defaults.
///
/// ```
/// let p = cliper::TvParams::new(0.01, 50);
/// assert_eq!((p.rho, p.relaxation, p.inner_iterations, p.inner_tolerance), (0.5, 1.6, 10, 1e-3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TvParams {
    /// The TV weight λ.
    pub lambda: f64,
    /// Inner CG iterations in all (ADMM stops once more have run).
    pub iterations: usize,
    /// The penalty ρ.
    pub rho: f64,
    /// The over-relaxation α.
    pub relaxation: f64,
    /// CG iterations per x-update, at most.
    pub inner_iterations: usize,
    /// The x-update's relative tolerance.
    pub inner_tolerance: f64,
}

impl TvParams {
    /// λ and the CG budget, BART's other defaults.
    pub fn new(lambda: f64, iterations: usize) -> TvParams {
        TvParams { lambda, iterations, rho: 0.5, relaxation: 1.6, inner_iterations: 10, inner_tolerance: 1e-3 }
    }

    /// ρ (BART's `-u`).
    pub fn rho(mut self, rho: f64) -> TvParams {
        self.rho = rho;
        self
    }

    /// CG iterations per x-update (BART's `-C`).
    pub fn inner_iterations(mut self, n: usize) -> TvParams {
        self.inner_iterations = n;
        self
    }
}

const GROUP: usize = 256;

/// ADMM for isotropic TV, in BART's order: from `x = z = u = 0`, repeat `rhs = b + ρGᴴ(z − u)`; `x` = CG on
/// `(AᴴA + ρGᴴG) x = rhs` from the current `x` (at most `inner_iterations`, stopping at `inner_tolerance`);
/// `v = α G x + (1 − α) z + u`; `z = shrink(v, λ/ρ)` jointly over the gradient's components; `u = v − z`; until
/// more than `iterations` CG iterations have run. `G` is the periodic backward difference along each axis of the
/// image. Each ADMM iteration reads one number from the device (the CG iterations it took).
///
/// ```
/// use cliper::{LinearOperator, TvAdmm, TvParams, XData};
/// // Denoising (A = I): a step with a one-sample spike of 0.5; TV (λ = 0.3) removes the spike and keeps the step.
/// struct Identity;
/// impl LinearOperator<f64> for Identity {
///     fn apply(&mut self, x: &XData<f64>, out: &XData<f64>) -> cliper::Result<()> { out.copy_from(x) }
/// }
/// let app = cliper::ClApp::new()?;
/// let mut y = vec![0.0f64; 32];
/// y[16..].iter_mut().for_each(|v| *v = 1.0);
/// y[5] = 0.5;
/// let x = XData::zeros(&app, &[32])?;
/// let admm_iterations = TvAdmm::new(&app, &[32], TvParams::new(0.3, 200))?
///     .solve(&mut Identity, &XData::from_slice(&app, &[32], &y)?, &x)?;
/// let x = x.to_vec()?;
/// assert!(admm_iterations > 1 && x[5] < 0.1 && x[25] - x[8] > 0.5, "{x:?}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct TvAdmm<T: Element> {
    params: TvParams,
    extents: [usize; 3],
    /// Images solved together, each with its own gradient (no difference across frames: BART's `T:7`).
    frames: usize,
    z: XData<T>,
    u: XData<T>,
    rhs: XData<T>,
    cg: ConjugateGradient<T>,
    /// tv_start, tv_rhs, tv_gram_add, tv_update.
    kernels: [Kernel; 4],
    index: IndexType,
}

/// `AᴴA + ρGᴴG` as one operator for the inner CG.
struct WithTv<'a, T: Element> {
    normal: &'a mut dyn LinearOperator<T>,
    gram: &'a mut Kernel,
    rho: T::Real,
    extents: [usize; 3],
    frames: usize,
    index: IndexType,
}

impl<T: Element> LinearOperator<T> for WithTv<'_, T> {
    fn apply(&mut self, x: &XData<T>, out: &XData<T>) -> Result<()> {
        self.normal.apply(x, out)?;
        let count = self.frames * self.extents.iter().product::<usize>();
        over_image(
            self.gram.launch().input("x", x).in_out("out", out).scalar("rho", self.rho),
            self.index,
            &self.extents,
            self.frames,
            count,
        )
    }
}

/// Ends a launch over the images' `count` positions: the extents as index arguments `n0`, `n1`, `n2` and the
/// frames (none for a kernel that only takes the count, already given), then the sizes, and enqueues it.
fn over_image(launch: Launch<'_>, index: IndexType, extents: &[usize], frames: usize, count: usize) -> Result<()> {
    let names = ["n0", "n1", "n2"].into_iter();
    let launch = names.zip(extents).fold(launch, |l, (name, &n)| l.index(name, index, n as u64));
    let launch = if extents.is_empty() { launch } else { launch.index("frames", index, frames as u64) };
    let groups = count.div_ceil(GROUP).clamp(1, 1 << 16);
    launch.global(&[groups * GROUP]).local(&[GROUP]).enqueue()
}

impl<T: Element> TvAdmm<T> {
    /// A solver for images of `shape` (1 to 3 axes).
    pub fn new(app: &ClApp, shape: &[usize], params: TvParams) -> Result<TvAdmm<T>> {
        Self::with_frames(app, 1, shape, params)
    }

    /// A solver for `frames` images of `shape` (1 to 3 axes) stored one after the other, solved as one problem
    /// (the inner CG's steps are shared, as BART's `pics` runs frames) with TV over each image's own axes.
    ///
    /// ```
    /// let app = cliper::ClApp::new()?;
    /// let admm = cliper::TvAdmm::<f32>::with_frames(&app, 4, &[30, 20], cliper::TvParams::new(0.1, 10))?;
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn with_frames(app: &ClApp, frames: usize, shape: &[usize], params: TvParams) -> Result<TvAdmm<T>> {
        let op = "TvAdmm";
        if frames == 0 {
            return Err(Error::invalid(op, "a batch needs at least one frame"));
        }
        if shape.is_empty() || shape.len() > 3 || shape.contains(&0) {
            return Err(Error::invalid(op, format!("the image must have 1 to 3 axes, none empty; got {shape:?}")));
        }
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !(params.lambda.is_finite() && params.lambda >= 0.0 && positive(params.rho) && positive(params.relaxation)) {
            return Err(Error::invalid(
                op,
                format!("λ {} must be ≥ 0, ρ {} and α {} > 0", params.lambda, params.rho, params.relaxation),
            ));
        }
        let mut extents = [1usize; 3];
        for (slot, &n) in extents.iter_mut().skip(3 - shape.len()).zip(shape) {
            *slot = n;
        }
        let count: usize = frames * shape.iter().product::<usize>();
        let batch_shape: Vec<usize> = if frames == 1 { shape.to_vec() } else { [&[frames][..], shape].concat() };
        let index = IndexType::for_extent(3 * count as u64);
        let options = format!("{} -DIDX={} -DGROUP={GROUP}", T::build_options(), index.cl_type());
        let program = app.build_program("solve.cl", &kernels::with_common(kernels::SOLVE), &options)?;
        let kernel = |name: &str| program.kernel(name).map(|k| k.owned_by(op));
        let inner = CgParams::new(params.inner_iterations).tolerance(params.inner_tolerance);
        Ok(TvAdmm {
            params,
            extents,
            frames,
            z: XData::zeros(app, &[3 * count])?,
            u: XData::zeros(app, &[3 * count])?,
            rhs: XData::zeros(app, &batch_shape)?,
            cg: ConjugateGradient::new(app, &batch_shape, inner)?,
            kernels: [kernel("tv_start")?, kernel("tv_rhs")?, kernel("tv_gram_add")?, kernel("tv_update")?],
            index,
        })
    }

    /// Runs ADMM for `b = Aᴴ y` with the normal operator `normal = AᴴA`, into `x` (overwritten; contiguous).
    /// Returns the ADMM iterations run.
    pub fn solve(&mut self, normal: &mut dyn LinearOperator<T>, b: &XData<T>, x: &XData<T>) -> Result<usize> {
        let count: usize = self.frames * self.extents.iter().product::<usize>();
        for (name, a) in [("b", b), ("x", x)] {
            if a.len() != count {
                let rule = format!("{name} of {count} elements (like {:?})", self.rhs.shape());
                return Err(Error::shape_rule("TvAdmm", rule, a.shape()));
            }
            if !a.is_packed() {
                return Err(Error::invalid(
                    "TvAdmm",
                    format!("{name} must be contiguous from its buffer's start (XData::contiguous makes a copy)"),
                ));
            }
        }
        let real = |v: f64| T::Real::from_c64(Complex::new(v, 0.0));
        let idx = self.index;
        let [start, ..] = &mut self.kernels;
        over_image(
            start.launch().output("x", x).output("z", &self.z).output("u", &self.u).index("count", idx, count as u64),
            idx,
            &[],
            1,
            count,
        )?;
        let (mut total, mut iterations) = (0usize, 0usize);
        // ADMM stops on the CG budget; a right-hand side that stays 0 takes no CG iterations, so the ADMM
        // iterations are bounded too.
        while iterations <= self.params.iterations {
            let [_, rhs_kernel, gram, update] = &mut self.kernels;
            let launch =
                rhs_kernel.launch().input("b", b).input("z", &self.z).input("u", &self.u).output("out", &self.rhs);
            over_image(launch.scalar("rho", real(self.params.rho)), idx, &self.extents, self.frames, count)?;
            let (extents, frames) = (self.extents, self.frames);
            let mut op = WithTv { normal: &mut *normal, gram, rho: real(self.params.rho), extents, frames, index: idx };
            self.cg.solve_from(&mut op, &self.rhs, x)?;
            total += self.cg.iterations_run()?;
            let launch = update.launch().input("x", x).in_out("z", &self.z).in_out("u", &self.u);
            let launch = launch
                .scalar("alpha", real(self.params.relaxation))
                .scalar("theta", real(self.params.lambda / self.params.rho));
            over_image(launch, idx, &self.extents, self.frames, count)?;
            iterations += 1;
            if total > self.params.iterations {
                break;
            }
        }
        Ok(iterations)
    }
}
