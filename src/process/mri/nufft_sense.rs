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
    /// The NUFFT and its Toeplitz normal operator of each frame's points.
    frames: Vec<(Nufft<T>, NufftNormal<T>)>,
    a: XData<T>,
    b: XData<T>,
    /// One frame's image and samples, packed, when there are several frames (the kernels read from a buffer's
    /// start; frames of a batch are views into it).
    frame_image: Option<XData<T>>,
    frame_samples: Option<XData<T>>,
    image_shape: Vec<usize>,
    kspace_shape: Vec<usize>,
    /// expand, combine.
    kernels: [Kernel; 2],
    index: IndexType,
}

impl<T: ComplexElement> NufftSenseOperator<T> {
    /// The operator of `maps` (`[coils, N…]`, contiguous) at `points` (for the image `N`).
    pub fn new(maps: &XData<T>, points: &NufftPoints, params: NufftParams) -> Result<NufftSenseOperator<T>> {
        Self::with_frames(maps, std::slice::from_ref(points), params)
    }

    /// The operator of frames sharing `maps`, frame `f` sampled at `points[f]` (as many points in each): images
    /// `[frames, N…]` to samples `[frames, coils, points]`, one block per frame — `bart pics -t` on data with a
    /// TIME dimension. One frame is [`NufftSenseOperator::new`] (images `[N…]`, samples `[coils, points]`).
    ///
    /// ```
    /// use cliper::{NufftParams, NufftPoints, NufftSenseOperator, XData};
    /// use num_complex::Complex32 as C;
    /// let app = cliper::ClApp::new()?;
    /// let maps = XData::from_slice(&app, &[1, 4, 4], &[C::new(1.0, 0.0); 16])?;
    /// let frames = [NufftPoints::new(&[4, 4], vec![0.0, 0.0])?, NufftPoints::new(&[4, 4], vec![1.0, 0.0])?];
    /// let mut a = NufftSenseOperator::with_frames(&maps, &frames, NufftParams::default())?;
    /// assert_eq!((a.image_shape(), a.kspace_shape()), (&[2, 4, 4][..], &[2, 1, 1][..]));
    /// // A delta at the centre of both frames: 1/√16 at any k.
    /// let mut x = vec![C::new(0.0, 0.0); 32];
    /// x[2 * 4 + 2] = C::new(1.0, 0.0);
    /// x[16 + 2 * 4 + 2] = C::new(1.0, 0.0);
    /// let y = XData::zeros(&app, &[2, 1, 1])?;
    /// a.forward(&XData::from_slice(&app, &[2, 4, 4], &x)?, &y)?;
    /// assert!(y.to_vec()?.iter().all(|v| (v - C::new(0.25, 0.0)).norm() < 1e-5));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn with_frames(maps: &XData<T>, points: &[NufftPoints], params: NufftParams) -> Result<NufftSenseOperator<T>> {
        let op = "NufftSenseOperator";
        let Some(first) = points.first() else {
            return Err(Error::invalid(op, "no frames: give the points of at least one"));
        };
        if let Some((f, other)) = points.iter().enumerate().find(|(_, p)| p.len() != first.len()) {
            return Err(Error::invalid(
                op,
                format!("frame {f} has {} points and frame 0 {}: every frame needs as many", other.len(), first.len()),
            ));
        }
        let points_per_frame = first.len();
        let Some((&coils, spatial)) = maps.shape().split_first() else {
            return Err(Error::invalid(op, "the maps must be [coils, spatial…]"));
        };
        if let Some(p) = points.iter().find(|p| p.shape() != spatial) {
            return Err(Error::shape_because(op, p.shape(), spatial, "maps over the trajectory's image"));
        }
        if !maps.is_packed() {
            return Err(Error::invalid(
                op,
                "the maps must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        let app = maps.app();
        let frames = points
            .iter()
            .map(|p| Ok((Nufft::new(app, p, coils, params)?, NufftNormal::new(app, p, coils, None, params)?)))
            .collect::<Result<Vec<_>>>()?;
        let several = points.len() > 1;
        let lead: Vec<usize> = if several { vec![points.len()] } else { Vec::new() };
        let image_shape: Vec<usize> = lead.iter().chain(spatial).copied().collect();
        let kspace_shape: Vec<usize> = lead.iter().copied().chain([coils, points_per_frame]).collect();
        let a = XData::uninit(app, op, maps.shape())?;
        let b = XData::uninit(app, op, maps.shape())?;
        let index = IndexType::for_extent(maps.len() as u64);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("mri.cl", &kernels::with_common(kernels::MRI), &options)?;
        let kernels = [
            program.kernel("coil_expand").map(|k| k.owned_by(op))?,
            program.kernel("coil_combine").map(|k| k.owned_by(op))?,
        ];
        let frame_image = if several { Some(XData::uninit(app, op, spatial)?) } else { None };
        let frame_samples = if several { Some(XData::uninit(app, op, &[coils, points_per_frame])?) } else { None };
        Ok(NufftSenseOperator {
            maps: maps.clone(),
            coils,
            spatial: spatial.to_vec(),
            frames,
            a,
            b,
            frame_image,
            frame_samples,
            image_shape,
            kspace_shape,
            kernels,
            index,
        })
    }

    /// The image shape: the maps' spatial axes, after the frames when there are several.
    pub fn image_shape(&self) -> &[usize] {
        &self.image_shape
    }

    /// The samples' shape `[coils, points]`, after the frames when there are several.
    pub fn kspace_shape(&self) -> &[usize] {
        &self.kspace_shape
    }

    /// Frames (1 for [`NufftSenseOperator::new`]).
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// The first frame's NUFFT plan.
    pub fn strategy(&self) -> Option<NufftStrategy> {
        self.frames.first().map(|(nufft, _)| nufft.strategy())
    }

    /// Frame `f` of a batch `x` packed for the kernels: `x` itself with one frame, else `scratch` holding a copy
    /// of the frame (`copy_in`) or to be copied out after (`frame_out`).
    fn frame_in(x: &XData<T>, f: usize, scratch: Option<&XData<T>>) -> Result<XData<T>> {
        match scratch {
            None => Ok(x.clone()),
            Some(s) => {
                s.copy_from(&x.index_axis(0, f)?)?;
                Ok(s.clone())
            }
        }
    }

    /// Copies a packed frame result back into frame `f` of `x` (nothing with one frame: it was written in place).
    fn frame_out(x: &XData<T>, f: usize, scratch: Option<&XData<T>>) -> Result<()> {
        match scratch {
            None => Ok(()),
            Some(s) => x.index_axis(0, f)?.copy_from(s),
        }
    }

    /// Where a frame's result goes before `frame_out`: `x` itself with one frame, else the scratch.
    fn frame_target(x: &XData<T>, scratch: Option<&XData<T>>) -> XData<T> {
        scratch.unwrap_or(x).clone()
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

    /// Enqueues `y = A x`: the image `[frames, N…]` to samples `[frames, coils, points]` (no frame axis with one
    /// frame).
    pub fn forward(&mut self, x: &XData<T>, y: &XData<T>) -> Result<()> {
        Self::check("forward", x, &self.image_shape)?;
        Self::check("forward", y, &self.kspace_shape)?;
        let (a, image, samples) = (self.a.clone(), self.frame_image.clone(), self.frame_samples.clone());
        for f in 0..self.frames.len() {
            let xf = Self::frame_in(x, f, image.as_ref())?;
            self.coil_pass(false, &xf, &a)?;
            let yf = Self::frame_target(y, samples.as_ref());
            self.nufft_of(f)?.forward(&a, &yf)?;
            Self::frame_out(y, f, samples.as_ref())?;
        }
        Ok(())
    }

    /// Enqueues `x = Aᴴ y`: samples `[frames, coils, points]` to the image `[frames, N…]` (no frame axis with one
    /// frame).
    pub fn adjoint(&mut self, y: &XData<T>, x: &XData<T>) -> Result<()> {
        Self::check("adjoint", y, &self.kspace_shape)?;
        Self::check("adjoint", x, &self.image_shape)?;
        let (a, image, samples) = (self.a.clone(), self.frame_image.clone(), self.frame_samples.clone());
        for f in 0..self.frames.len() {
            let yf = Self::frame_in(y, f, samples.as_ref())?;
            self.nufft_of(f)?.adjoint(&yf, &a)?;
            let xf = Self::frame_target(x, image.as_ref());
            self.coil_pass(true, &a, &xf)?;
            Self::frame_out(x, f, image.as_ref())?;
        }
        Ok(())
    }

    /// Enqueues `out = AᴴA x` (Toeplitz, frame by frame).
    pub fn normal(&mut self, x: &XData<T>, out: &XData<T>) -> Result<()> {
        Self::check("normal", x, &self.image_shape)?;
        Self::check("normal", out, &self.image_shape)?;
        let (a, b, image) = (self.a.clone(), self.b.clone(), self.frame_image.clone());
        for f in 0..self.frames.len() {
            let xf = Self::frame_in(x, f, image.as_ref())?;
            self.coil_pass(false, &xf, &a)?;
            self.frames.get_mut(f).ok_or_else(|| Self::no_frame(f))?.1.apply(&a, &b)?;
            let of = Self::frame_target(out, image.as_ref());
            self.coil_pass(true, &b, &of)?;
            Self::frame_out(out, f, image.as_ref())?;
        }
        Ok(())
    }

    fn nufft_of(&mut self, f: usize) -> Result<&mut Nufft<T>> {
        self.frames.get_mut(f).map(|(nufft, _)| nufft).ok_or_else(|| Self::no_frame(f))
    }

    fn no_frame(f: usize) -> Error {
        Error::invalid("NufftSenseOperator", format!("no frame {f}"))
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
    /// The points of each frame.
    points: Vec<NufftPoints>,
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
        Self::with_frames(samples, maps, std::slice::from_ref(points), out, penalty, nufft)
    }

    /// Reconstructs frames sharing `maps`, frame `f` sampled at `points[f]` (`samples` `[frames, coils, points]`)
    /// into `out` (`[frames, N…]`) as one problem, as `bart pics -t` runs data with a TIME dimension: one CG over
    /// every frame, FISTA with one step (from the whole operator's eigenvalue) and the same shifts for all, ADMM with
    /// a shared inner CG and no difference across frames. One frame is [`NufftSense::new`].
    ///
    /// ```
    /// use cliper::{CgParams, NufftParams, NufftPoints, NufftSense, NufftSenseOperator, Process, SensePenalty, XData};
    /// use num_complex::Complex64 as C;
    /// let app = cliper::ClApp::new()?;
    /// // Two frames on their own grids of 6 × 5 integer frequencies (the second shifted by ½): both recovered.
    /// let grid = |shift: f64| -> Vec<f64> { (0..30).flat_map(|i| [(i / 5) as f64 - 3.0 + shift, (i % 5) as f64 - 2.0]).collect() };
    /// let frames = [NufftPoints::new(&[6, 5], grid(0.0))?, NufftPoints::new(&[6, 5], grid(0.5))?];
    /// let maps = XData::from_slice(&app, &[1, 6, 5], &[C::new(1.0, 0.0); 30])?;
    /// let truth: Vec<C> = (0..60).map(|i| C::new((i % 4) as f64, (i % 7) as f64)).collect();
    /// let params = NufftParams::default().tolerance(1e-9);
    /// let y = XData::zeros(&app, &[2, 1, 30])?;
    /// NufftSenseOperator::with_frames(&maps, &frames, params)?.forward(&XData::from_slice(&app, &[2, 6, 5], &truth)?, &y)?;
    /// let out = XData::zeros(&app, &[2, 6, 5])?;
    /// NufftSense::with_frames(&y, &maps, &frames, &out, SensePenalty::L2(CgParams::new(30)), params).run()?;
    /// let worst = out.to_vec()?.iter().zip(&truth).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
    /// assert!(worst < 1e-5, "{worst}");
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn with_frames(
        samples: &XData<T>,
        maps: &XData<T>,
        points: &[NufftPoints],
        out: &XData<T>,
        penalty: SensePenalty,
        nufft: NufftParams,
    ) -> NufftSense<T> {
        NufftSense {
            samples: samples.clone(),
            maps: maps.clone(),
            points: points.to_vec(),
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
        self.plan.as_ref().and_then(|p| p.sense.strategy())
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
        let mut sense = NufftSenseOperator::with_frames(&self.maps, &self.points, self.nufft)?;
        NufftSenseOperator::check("samples", &self.samples, sense.kspace_shape())?;
        NufftSenseOperator::check("image", &self.out, sense.image_shape())?;
        let app = self.out.app();
        let shape = sense.image_shape().to_vec();
        let (frames, spatial) = (sense.frame_count(), sense.spatial.clone());
        let solver = match self.penalty {
            SensePenalty::L2(p) => Solver::Cg(Box::new(ConjugateGradient::new(app, &shape, p)?)),
            SensePenalty::L1Wavelet(p) => {
                Solver::Fista(Box::new(WaveletFista::new(op, app, frames, &spatial, p, &mut sense, true)?))
            }
            SensePenalty::Tv(p) => Solver::Admm(Box::new(TvAdmm::with_frames(app, frames, &spatial, p)?)),
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
