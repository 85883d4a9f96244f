//! [`NufftSenseOperator`]: the non-Cartesian SENSE operator `A = F_nu · S` (maps, then a NUFFT per coil) and
//! [`NufftSense`], SENSE reconstructions with it and a [`SensePenalty`] (`bart pics -t TRAJ -l2 | -l1 | -R T`).

use super::l1_wavelet::{L1WaveletParams, WaveletFista};
use crate::app::Kernel;
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::nufft::{Nufft, NufftNormal, NufftParams, NufftPoints, NufftStrategy};
use crate::process::solve::{CgParams, ConjugateGradient, LinearOperator, TvAdmm, TvParams};
use crate::process::{Prepared, Process};

const GROUP: usize = 256;

/// The SENSE operator of non-Cartesian samples: for an image `x` (1 to 3 axes) and maps `S` (`[coils, N…]`),
/// `A x = F_nu(S · x)` with `F_nu` the [`Nufft`] of the points (BART's convention and scaling, 1/√N: `bart
/// nufft`), so `A` is `bart pics -t`'s forward operator. [`NufftSenseOperator::adjoint`] is
/// `Aᴴ y = Σ_c conj(S_c) · F_nuᴴ y_c`, and as a [`LinearOperator`] it applies `AᴴA` through the Toeplitz embedding
/// ([`NufftNormal`]: two FFTs on the doubled grid per coil, no gridding), as `pics` does by default.
///
/// ```
/// use cliper::{NufftParams, NufftPoints, NufftSenseOperator, XData};
/// use num_complex::Complex32 as C;
/// let app = cliper::ClApp::new()?;
/// let maps = XData::from_slice(&app, &[1, 4, 4], &[C::new(1.0, 0.0); 16])?;
/// let points = NufftPoints::new(&[4, 4], vec![0.0, 0.0])?;
/// let mut a = NufftSenseOperator::new(&maps, &points, NufftParams::default())?;
/// // A delta at the centre: its transform at k = 0 is 1/√16.
/// let mut x = vec![C::new(0.0, 0.0); 16];
/// x[2 * 4 + 2] = C::new(1.0, 0.0);
/// let y = XData::zeros(&app, &[1, 1])?;
/// a.forward(&XData::from_slice(&app, &[4, 4], &x)?, &y)?;
/// assert!((y.to_vec()?[0] - C::new(0.25, 0.0)).norm() < 1e-5);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct NufftSenseOperator<T: ComplexElement> {
    maps: XData<T>,
    coils: usize,
    spatial: Vec<usize>,
    points: usize,
    nufft: Nufft<T>,
    normal: NufftNormal<T>,
    a: XData<T>,
    b: XData<T>,
    /// expand, combine.
    kernels: [Kernel; 2],
    index: IndexType,
}

impl<T: ComplexElement> NufftSenseOperator<T> {
    /// The operator of `maps` (`[coils, N…]`, contiguous) at `points` (for the image `N`).
    pub fn new(maps: &XData<T>, points: &NufftPoints, params: NufftParams) -> Result<NufftSenseOperator<T>> {
        let op = "NufftSenseOperator";
        let Some((&coils, spatial)) = maps.shape().split_first() else {
            return Err(Error::invalid(op, "the maps must be [coils, spatial…]"));
        };
        if spatial != points.shape() {
            return Err(Error::shape_because(op, points.shape(), spatial, "maps over the trajectory's image"));
        }
        if !maps.is_packed() {
            return Err(Error::invalid(
                op,
                "the maps must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        let app = maps.app();
        let nufft = Nufft::new(app, points, coils, params)?;
        let normal = NufftNormal::new(app, points, coils, None, params)?;
        let a = XData::uninit(app, op, maps.shape())?;
        let b = XData::uninit(app, op, maps.shape())?;
        let index = IndexType::for_extent(maps.len() as u64);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("mri.cl", &kernels::with_common(kernels::MRI), &options)?;
        let kernels = [
            program.kernel("coil_expand").map(|k| k.owned_by(op))?,
            program.kernel("coil_combine").map(|k| k.owned_by(op))?,
        ];
        Ok(NufftSenseOperator {
            maps: maps.clone(),
            coils,
            spatial: spatial.to_vec(),
            points: points.len(),
            nufft,
            normal,
            a,
            b,
            kernels,
            index,
        })
    }

    /// The image shape (the maps' spatial axes).
    pub fn image_shape(&self) -> &[usize] {
        &self.spatial
    }

    /// The samples' shape `[coils, points]`.
    pub fn kspace_shape(&self) -> [usize; 2] {
        [self.coils, self.points]
    }

    fn check(what: &str, x: &XData<T>, shape: &[usize]) -> Result<()> {
        if x.shape() != shape {
            return Err(Error::shape(format!("NufftSenseOperator::{what}"), shape, x.shape()));
        }
        if !x.is_packed() {
            return Err(Error::invalid(
                format!("NufftSenseOperator::{what}"),
                "the array must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        Ok(())
    }

    fn coil_pass(&mut self, combine: bool, input: &XData<T>, output: &XData<T>) -> Result<()> {
        let positions = self.spatial.iter().product::<usize>();
        let groups = positions.div_ceil(GROUP).clamp(1, 1 << 16);
        let [expand, combine_kernel] = &mut self.kernels;
        let (kernel, name) = if combine { (combine_kernel, "in") } else { (expand, "x") };
        kernel
            .launch()
            .input(name, input)
            .input("s", &self.maps)
            .output("out", output)
            .index("coils", self.index, self.coils as u64)
            .index("positions", self.index, positions as u64)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .enqueue()
    }

    /// Enqueues `y = A x`: the image `[N…]` to samples `[coils, points]`.
    pub fn forward(&mut self, x: &XData<T>, y: &XData<T>) -> Result<()> {
        Self::check("forward", x, &self.spatial)?;
        Self::check("forward", y, &self.kspace_shape())?;
        let a = self.a.clone();
        self.coil_pass(false, x, &a)?;
        self.nufft.forward(&a, y)
    }

    /// Enqueues `x = Aᴴ y`: samples `[coils, points]` to the image `[N…]`.
    pub fn adjoint(&mut self, y: &XData<T>, x: &XData<T>) -> Result<()> {
        Self::check("adjoint", y, &self.kspace_shape())?;
        Self::check("adjoint", x, &self.spatial)?;
        let a = self.a.clone();
        self.nufft.adjoint(y, &a)?;
        self.coil_pass(true, &a, x)
    }

    /// Enqueues `out = AᴴA x` (Toeplitz).
    pub fn normal(&mut self, x: &XData<T>, out: &XData<T>) -> Result<()> {
        Self::check("normal", x, &self.spatial)?;
        Self::check("normal", out, &self.spatial)?;
        let (a, b) = (self.a.clone(), self.b.clone());
        self.coil_pass(false, x, &a)?;
        self.normal.apply(&a, &b)?;
        self.coil_pass(true, &b, out)
    }
}

impl<T: ComplexElement> LinearOperator<T> for NufftSenseOperator<T> {
    fn apply(&mut self, x: &XData<T>, out: &XData<T>) -> Result<()> {
        self.normal(x, out)
    }
}

/// The penalty of a non-Cartesian SENSE reconstruction ([`NufftSense`]), which also picks its solver, as `bart
/// pics` picks one: ℓ2 (Tikhonov λ|x|²) by conjugate gradients (`pics -l2 -r λ`), ℓ1 on Daubechies-2 wavelet
/// coefficients by FISTA (`pics -l1 -r λ`), isotropic total variation by ADMM (`pics -R T:7:0:λ`). Each solver's
/// parameters convert into it.
///
/// ```
/// use cliper::{CgParams, L1WaveletParams, SensePenalty, TvParams};
/// assert_eq!(SensePenalty::from(CgParams::new(30)).name(), "l2");
/// assert_eq!(SensePenalty::from(L1WaveletParams::new(0.005, 30)).name(), "l1-wavelet");
/// assert_eq!(SensePenalty::from(TvParams::new(0.01, 50)).name(), "tv");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SensePenalty {
    /// `(AᴴA + λI) x = Aᴴ y` by conjugate gradients.
    L2(CgParams),
    /// `½|A x − y|² + λ|W x|₁` by FISTA with the wavelet soft threshold (cycle-spun as BART's).
    L1Wavelet(L1WaveletParams),
    /// `½|A x − y|² + λ TV(x)` by ADMM.
    Tv(TvParams),
}

impl SensePenalty {
    /// Its name as the CLI spells it: `l2`, `l1-wavelet`, `tv`.
    pub fn name(&self) -> &'static str {
        match self {
            SensePenalty::L2(_) => "l2",
            SensePenalty::L1Wavelet(_) => "l1-wavelet",
            SensePenalty::Tv(_) => "tv",
        }
    }
}

impl From<CgParams> for SensePenalty {
    fn from(p: CgParams) -> SensePenalty {
        SensePenalty::L2(p)
    }
}

impl From<L1WaveletParams> for SensePenalty {
    fn from(p: L1WaveletParams) -> SensePenalty {
        SensePenalty::L1Wavelet(p)
    }
}

impl From<TvParams> for SensePenalty {
    fn from(p: TvParams) -> SensePenalty {
        SensePenalty::Tv(p)
    }
}

/// SENSE reconstruction of non-Cartesian samples with the [`NufftSenseOperator`] `A` (Toeplitz `AᴴA`, as BART's
/// default) and a [`SensePenalty`]: `bart pics -t TRAJ -w 1` with `-l2 -r λ` (CG-SENSE), `-l1 -r λ` (FISTA on
/// wavelets) or `-R T:7:0:λ` (TV by ADMM), the same iterations. The samples are `[coils, points]`, the maps
/// `[coils, N…]`, the image `[N…]`; k-space is taken as given (divide by [`super::BartScaling`]'s estimate first
/// to match `pics` without `-w`).
///
/// ```
/// use cliper::{CgParams, NufftParams, NufftPoints, NufftSense, NufftSenseOperator, Process, SensePenalty, XData};
/// use num_complex::Complex64 as C;
/// let app = cliper::ClApp::new()?;
/// // One coil, every integer frequency of a 6 × 5 grid sampled: A is unitary and CG recovers the image.
/// let coords: Vec<f64> = (0..30).flat_map(|i| [(i / 5) as f64 - 3.0, (i % 5) as f64 - 2.0]).collect();
/// let points = NufftPoints::new(&[6, 5], coords)?;
/// let maps = XData::from_slice(&app, &[1, 6, 5], &[C::new(1.0, 0.0); 30])?;
/// let truth: Vec<C> = (0..30).map(|i| C::new((i % 4) as f64, 1.0)).collect();
/// let y = XData::zeros(&app, &[1, 30])?;
/// NufftSenseOperator::new(&maps, &points, NufftParams::default().tolerance(1e-9))?
///     .forward(&XData::from_slice(&app, &[6, 5], &truth)?, &y)?;
/// let out = XData::zeros(&app, &[6, 5])?;
/// let penalty = SensePenalty::L2(CgParams::new(5));
/// NufftSense::new(&y, &maps, &points, &out, penalty, NufftParams::default().tolerance(1e-9)).run()?;
/// let worst = out.to_vec()?.iter().zip(&truth).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
/// assert!(worst < 1e-6, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct NufftSense<T: ComplexElement> {
    samples: XData<T>,
    maps: XData<T>,
    points: NufftPoints,
    out: XData<T>,
    penalty: SensePenalty,
    nufft: NufftParams,
    plan: Prepared<SensePlan<T>>,
}

/// The solver a [`SensePenalty`] picks, sized for the image.
enum Solver<T: ComplexElement> {
    Cg(Box<ConjugateGradient<T>>),
    Fista(Box<WaveletFista<T>>),
    Admm(Box<TvAdmm<T>>),
}

struct SensePlan<T: ComplexElement> {
    sense: NufftSenseOperator<T>,
    solver: Solver<T>,
    rhs: XData<T>,
}

impl<T: ComplexElement> NufftSense<T> {
    /// Reconstructs `samples` (`[coils, points]`) with `maps` at `points` into `out` (`[N…]`).
    pub fn new(
        samples: &XData<T>,
        maps: &XData<T>,
        points: &NufftPoints,
        out: &XData<T>,
        penalty: SensePenalty,
        nufft: NufftParams,
    ) -> NufftSense<T> {
        NufftSense {
            samples: samples.clone(),
            maps: maps.clone(),
            points: points.clone(),
            out: out.clone(),
            penalty,
            nufft,
            plan: Prepared::default(),
        }
    }

    /// Allocates the image, reconstructs once and returns it.
    pub fn apply(
        samples: &XData<T>,
        maps: &XData<T>,
        points: &NufftPoints,
        penalty: SensePenalty,
        nufft: NufftParams,
    ) -> Result<XData<T>> {
        let out = XData::uninit(maps.app(), "NufftSense", &Self::output_shape(maps.shape())?)?;
        NufftSense::new(samples, maps, points, &out, penalty, nufft).run()?;
        Ok(out)
    }

    /// The image shape for maps of `maps_shape` (`[coils, N…]`): `N`.
    ///
    /// ```
    /// use cliper::NufftSense;
    /// use num_complex::Complex32;
    /// assert_eq!(NufftSense::<Complex32>::output_shape(&[8, 64, 48])?, vec![64, 48]);
    /// assert!(NufftSense::<Complex32>::output_shape(&[8]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(maps_shape: &[usize]) -> Result<Vec<usize>> {
        match maps_shape {
            [_, spatial @ ..] if (1..=3).contains(&spatial.len()) => Ok(spatial.to_vec()),
            _ => Err(Error::invalid(
                "NufftSense",
                format!("maps must be [coils, spatial…] with 1 to 3 spatial axes; got {maps_shape:?}"),
            )),
        }
    }

    /// The NUFFT's plan; `None` before `init`.
    pub fn strategy(&self) -> Option<NufftStrategy> {
        self.plan.as_ref().map(|p| p.sense.nufft.strategy())
    }

    /// `Aᴴ y` of the samples as they are now (initialising first if needed): the image BART's `pics -t` estimates
    /// its data scaling from ([`super::BartScaling::from_image`]), from the plan the reconstruction runs with. A
    /// copy: the solvers keep their own.
    pub fn adjoint_image(&mut self) -> Result<XData<T>> {
        if !self.is_initialized() {
            self.init()?;
        }
        let SensePlan { sense, rhs, .. } = self.plan.get("NufftSense")?;
        sense.adjoint(&self.samples, rhs)?;
        let image = XData::uninit(rhs.app(), "NufftSense", rhs.shape())?;
        image.copy_from(rhs)?;
        Ok(image)
    }

    /// `|r_k| / |r₀|` per CG iteration of the last run (the ℓ2 penalty; the other solvers report none: empty).
    pub fn residuals(&self) -> Result<Vec<f64>> {
        match &self.plan.as_ref().ok_or_else(|| Error::NotInitialized { op: "NufftSense".into() })?.solver {
            Solver::Cg(cg) => cg.residuals(),
            Solver::Fista(_) | Solver::Admm(_) => Ok(Vec::new()),
        }
    }
}

impl<T: ComplexElement> Process for NufftSense<T> {
    fn name(&self) -> &str {
        "NufftSense"
    }

    fn init(&mut self) -> Result<()> {
        let op = "NufftSense";
        let mut sense = NufftSenseOperator::new(&self.maps, &self.points, self.nufft)?;
        NufftSenseOperator::check("samples", &self.samples, &sense.kspace_shape())?;
        NufftSenseOperator::check("image", &self.out, sense.image_shape())?;
        let app = self.out.app();
        let shape = sense.image_shape().to_vec();
        let solver = match self.penalty {
            SensePenalty::L2(p) => Solver::Cg(Box::new(ConjugateGradient::new(app, &shape, p)?)),
            SensePenalty::L1Wavelet(p) => {
                Solver::Fista(Box::new(WaveletFista::new(op, app, 1, &shape, p, &mut sense, true)?))
            }
            SensePenalty::Tv(p) => Solver::Admm(Box::new(TvAdmm::new(app, &shape, p)?)),
        };
        let rhs = XData::uninit(app, op, &shape)?;
        self.plan.set(SensePlan { sense, solver, rhs });
        Ok(())
    }

    /// Enqueues the reconstruction (ADMM waits for the device once per iteration, for its CG count).
    fn launch(&mut self) -> Result<()> {
        let SensePlan { sense, solver, rhs } = self.plan.get("NufftSense")?;
        sense.adjoint(&self.samples, rhs)?;
        match solver {
            Solver::Cg(cg) => cg.solve(sense, rhs, &self.out),
            Solver::Fista(fista) => fista.solve(sense, rhs, &self.out),
            Solver::Admm(admm) => admm.solve(sense, rhs, &self.out).map(|_| ()),
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
