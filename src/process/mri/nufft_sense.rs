//! [`NufftSenseOperator`]: the non-Cartesian SENSE operator `A = F_nu · S` (maps, then a NUFFT per coil) and
//! [`NufftCgSense`], CG-SENSE with it (`bart pics -t TRAJ -l2`).

use crate::app::Kernel;
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::nufft::{Nufft, NufftNormal, NufftParams, NufftPoints, NufftStrategy};
use crate::process::solve::{CgParams, ConjugateGradient, LinearOperator};
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
        if !maps.is_contiguous() {
            return Err(Error::invalid(op, "the maps must be contiguous (XData::contiguous makes a copy)"));
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
        if !x.is_contiguous() {
            return Err(Error::invalid(format!("NufftSenseOperator::{what}"), "the array must be contiguous"));
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

/// CG-SENSE of non-Cartesian samples: conjugate gradients on `(AᴴA + λI) x = Aᴴ y` with the
/// [`NufftSenseOperator`] `A` — `bart pics -t TRAJ -l2 -r λ -i N -w 1` (Toeplitz, as BART's default). The samples
/// are `[coils, points]`, the maps `[coils, N…]`, the image `[N…]`; k-space is taken as given (divide by
/// [`super::BartScaling`]'s estimate first to match `pics` without `-w`).
///
/// ```
/// use cliper::{CgParams, NufftCgSense, NufftParams, NufftPoints, NufftSenseOperator, Process, XData};
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
/// NufftCgSense::new(&y, &maps, &points, &out, CgParams::new(5), NufftParams::default().tolerance(1e-9)).run()?;
/// let worst = out.to_vec()?.iter().zip(&truth).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
/// assert!(worst < 1e-6, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct NufftCgSense<T: ComplexElement> {
    samples: XData<T>,
    maps: XData<T>,
    points: NufftPoints,
    out: XData<T>,
    params: CgParams,
    nufft: NufftParams,
    plan: Prepared<CgPlan<T>>,
}

struct CgPlan<T: ComplexElement> {
    sense: NufftSenseOperator<T>,
    cg: ConjugateGradient<T>,
    rhs: XData<T>,
}

impl<T: ComplexElement> NufftCgSense<T> {
    /// Reconstructs `samples` (`[coils, points]`) with `maps` at `points` into `out` (`[N…]`).
    pub fn new(
        samples: &XData<T>,
        maps: &XData<T>,
        points: &NufftPoints,
        out: &XData<T>,
        params: CgParams,
        nufft: NufftParams,
    ) -> NufftCgSense<T> {
        NufftCgSense {
            samples: samples.clone(),
            maps: maps.clone(),
            points: points.clone(),
            out: out.clone(),
            params,
            nufft,
            plan: Prepared::default(),
        }
    }

    /// Allocates the image, reconstructs once and returns it.
    pub fn apply(
        samples: &XData<T>,
        maps: &XData<T>,
        points: &NufftPoints,
        params: CgParams,
        nufft: NufftParams,
    ) -> Result<XData<T>> {
        let out = XData::uninit(maps.app(), "NufftCgSense", &Self::output_shape(maps.shape())?)?;
        NufftCgSense::new(samples, maps, points, &out, params, nufft).run()?;
        Ok(out)
    }

    /// The image shape for maps of `maps_shape` (`[coils, N…]`): `N`.
    ///
    /// ```
    /// use cliper::NufftCgSense;
    /// use num_complex::Complex32;
    /// assert_eq!(NufftCgSense::<Complex32>::output_shape(&[8, 64, 48])?, vec![64, 48]);
    /// assert!(NufftCgSense::<Complex32>::output_shape(&[8]).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(maps_shape: &[usize]) -> Result<Vec<usize>> {
        match maps_shape {
            [_, spatial @ ..] if (1..=3).contains(&spatial.len()) => Ok(spatial.to_vec()),
            _ => Err(Error::invalid(
                "NufftCgSense",
                format!("maps must be [coils, spatial…] with 1 to 3 spatial axes; got {maps_shape:?}"),
            )),
        }
    }

    /// The NUFFT's plan; `None` before `init`.
    pub fn strategy(&self) -> Option<NufftStrategy> {
        self.plan.as_ref().map(|p| p.sense.nufft.strategy())
    }

    /// `|r_k| / |r₀|` per iteration of the last run.
    pub fn residuals(&self) -> Result<Vec<f64>> {
        self.plan.as_ref().ok_or_else(|| Error::NotInitialized { op: "NufftCgSense".into() })?.cg.residuals()
    }
}

impl<T: ComplexElement> Process for NufftCgSense<T> {
    fn name(&self) -> &str {
        "NufftCgSense"
    }

    fn init(&mut self) -> Result<()> {
        let sense = NufftSenseOperator::new(&self.maps, &self.points, self.nufft)?;
        NufftSenseOperator::check("samples", &self.samples, &sense.kspace_shape())?;
        NufftSenseOperator::check("image", &self.out, sense.image_shape())?;
        let app = self.out.app();
        let cg = ConjugateGradient::new(app, sense.image_shape(), self.params)?;
        let rhs = XData::uninit(app, "NufftCgSense", sense.image_shape())?;
        self.plan.set(CgPlan { sense, cg, rhs });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("NufftCgSense")?;
        plan.sense.adjoint(&self.samples, &plan.rhs)?;
        plan.cg.solve(&mut plan.sense, &plan.rhs, &self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
