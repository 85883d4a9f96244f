//! [`SimpleMRIRecon`] and [`RSoSRecon`]: image reconstruction from fully sampled (or zero-filled) k-space.

use super::coil_plan::CoilStrategy;
use super::coil_sum::{CoilParams, CoilSum};
use super::rsos::RSoS;
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::process::fft::{Fft, FftParams, FftShift, FftShiftParams, FftStrategy};
use crate::process::{Prepared, Process};

/// The inverse FFT of every coil over the spatial axes, with the shifts for k-space stored centred: the
/// processes and scratch arrays both reconstructions (and [`super::WalshMaps`]) share. Leaves coil images
/// `[frames…, coils, spatial…]`.
pub(super) struct CoilImages<T: ComplexElement> {
    /// `ifftshift` → `ifft` → `fftshift` for centred k-space, the transform alone otherwise.
    shifts: Option<(FftShift<T>, FftShift<T>)>,
    fft: Fft<T>,
    pub(super) images: XData<T>,
    coil_axis: usize,
}

impl<T: ComplexElement> CoilImages<T> {
    pub(super) fn new(op: &str, k: &KData<T>, centered: bool) -> Result<CoilImages<T>> {
        let data = k.as_xdata();
        let app = data.app();
        let coil_axis = k.coil_axis();
        let spatial: Vec<usize> = (coil_axis + 1..data.ndim()).collect();
        let images = XData::uninit(app, op, data.shape())?;
        let inverse = FftParams::inverse().axes(&spatial);
        Ok(if centered {
            // ifftshift → ifft → fftshift, numpy's recipe for centred k-space.
            let shifted = XData::uninit(app, op, data.shape())?;
            let spectrum = XData::uninit(app, op, data.shape())?;
            CoilImages {
                shifts: Some((
                    FftShift::new(data, &shifted, FftShiftParams::inverse().axes(&spatial)),
                    FftShift::new(&spectrum, &images, FftShiftParams::default().axes(&spatial)),
                )),
                fft: Fft::new(&shifted, &spectrum, inverse),
                images,
                coil_axis,
            }
        } else {
            CoilImages { shifts: None, fft: Fft::new(data, &images, inverse), images, coil_axis }
        })
    }

    /// Initialises the steps.
    pub(super) fn init(&mut self) -> Result<()> {
        if let Some((before, after)) = &mut self.shifts {
            before.init()?;
            after.init()?;
        }
        self.fft.init()
    }

    /// Launches the steps.
    pub(super) fn launch(&mut self) -> Result<()> {
        match &mut self.shifts {
            Some((before, after)) => {
                before.launch()?;
                self.fft.launch()?;
                after.launch()
            }
            None => self.fft.launch(),
        }
    }

    /// Initialises the steps, then `combine` (which reads `images`).
    fn init_with(&mut self, combine: &mut dyn Process) -> Result<()> {
        self.init()?;
        combine.init()
    }

    /// Launches the steps, then `combine`.
    fn launch_with(&mut self, combine: &mut dyn Process) -> Result<()> {
        self.launch()?;
        combine.launch()
    }

    fn strategy(&self, combine: Option<CoilStrategy>) -> Option<ReconStrategy> {
        Some(ReconStrategy { centered: self.shifts.is_some(), fft: self.fft.strategy()?, combine: combine? })
    }
}

/// The parameters of [`SimpleMRIRecon`] and [`RSoSRecon`]. Default: k-space stored centred (zero frequency in
/// the middle, as scanners and `data/kspace.mat` store it).
///
/// ```
/// use cliper::ReconParams;
/// assert!(ReconParams::default().is_centered());
/// assert!(!ReconParams::default().centered(false).is_centered()); // as numpy's fft leaves it
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReconParams {
    centered: bool,
}

impl Default for ReconParams {
    fn default() -> Self {
        ReconParams { centered: true }
    }
}

impl ReconParams {
    /// Whether k-space is stored centred (`ifftshift` before and `fftshift` after the transform).
    pub fn centered(mut self, centered: bool) -> ReconParams {
        self.centered = centered;
        self
    }

    /// Whether k-space is taken as centred.
    pub fn is_centered(&self) -> bool {
        self.centered
    }
}

/// How a reconstruction runs, as `strategy()` of [`SimpleMRIRecon`] and [`RSoSRecon`] reports it.
///
/// ```
/// use cliper::{KData, Process, RSoSRecon, ReconParams, XData};
/// let app = cliper::ClApp::new()?;
/// let k = KData::<num_complex::Complex32>::zeros(&app, &[], 4, &[32, 32])?;
/// let mut recon = RSoSRecon::new(&k, &XData::zeros(&app, &[32, 32])?, ReconParams::default());
/// recon.init()?;
/// let s = recon.strategy().unwrap();
/// assert!(s.centered && s.combine.coils == 4);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReconStrategy {
    /// Whether the shifts for centred k-space surround the transform.
    pub centered: bool,
    /// The inverse FFT of the coils.
    pub fft: FftStrategy,
    /// The coil combination.
    pub combine: CoilStrategy,
}

impl std::fmt::Display for ReconStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shifts = if self.centered { "shifts + " } else { "" };
        write!(f, "{shifts}inverse FFT ({}), then {}", self.fft, self.combine)
    }
}

/// The output shape of a reconstruction of `k`: `[frames…, spatial…]`.
fn image_shape<T: ComplexElement>(k: &KData<T>) -> Vec<usize> {
    k.frame_shape().iter().chain(k.spatial_shape()).copied().collect()
}

/// OpenCLIPER's SimpleMRIRecon: the inverse FFT of each coil's k-space over the spatial axes (numpy's `ifftn`,
/// "backward" normalisation), then `Σ_c image_c · conj(s_c)` with the [`KData`]'s sensitivity maps (fused in
/// one kernel, [`CoilSum`] with maps). The output is complex `[frames…, spatial…]`. With maps normalised to
/// `Σ_c |s_c|² = 1` and complete k-space this returns the object exactly.
///
/// k-space is taken as stored centred (`ifftshift` before and `fftshift` after the transform);
/// [`ReconParams::centered`]`(false)` takes it as numpy's `fft` leaves it.
///
/// ```
/// use cliper::{ClApp, KData, ReconParams, SimpleMRIRecon};
/// use num_complex::Complex32;
/// let app = ClApp::new()?;
/// let k = KData::<Complex32>::load(&app, "data/kspace.mat")?; // 8 coils, 64², maps attached
/// let image = SimpleMRIRecon::apply(&k, ReconParams::default())?; // [64, 64]
/// let phantom = cliper::SheppLogan::<f32>::reference(&[64, 64])?;
/// let got = image.to_vec()?;
/// let worst = got.iter().zip(phantom.iter()).map(|(g, p)| (g.re as f64 - p).abs().max(g.im.abs() as f64)).fold(0.0, f64::max);
/// assert!(worst < 1e-5, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct SimpleMRIRecon<T: ComplexElement> {
    k: KData<T>,
    out: XData<T>,
    params: ReconParams,
    plan: Prepared<(CoilImages<T>, CoilSum<T>)>,
}

impl<T: ComplexElement> SimpleMRIRecon<T> {
    /// Reconstructs `k` (which must carry sensitivity maps) into `out` (`[frames…, spatial…]`).
    pub fn new(k: &KData<T>, out: &XData<T>, params: ReconParams) -> SimpleMRIRecon<T> {
        SimpleMRIRecon { k: k.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the image, reconstructs `k` into it once and returns it.
    pub fn apply(k: &KData<T>, params: ReconParams) -> Result<XData<T>> {
        let out = XData::uninit(k.as_xdata().app(), "SimpleMRIRecon", &Self::output_shape(k)?)?;
        SimpleMRIRecon::new(k, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: `k`'s frames and spatial axes, `[frames…, spatial…]`.
    ///
    /// ```
    /// let app = cliper::ClApp::new()?;
    /// let k = cliper::KData::<num_complex::Complex32>::zeros(&app, &[3], 8, &[32, 32])?;
    /// assert_eq!(cliper::SimpleMRIRecon::output_shape(&k)?, vec![3, 32, 32]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(k: &KData<T>) -> Result<Vec<usize>> {
        Ok(image_shape(k))
    }

    /// How `init` planned the reconstruction; `None` before `init`.
    pub fn strategy(&self) -> Option<ReconStrategy> {
        self.plan.as_ref().and_then(|(images, combine)| images.strategy(combine.strategy()))
    }
}

impl<T: ComplexElement> Process for SimpleMRIRecon<T> {
    fn name(&self) -> &str {
        "SimpleMRIRecon"
    }

    fn init(&mut self) -> Result<()> {
        let op = "SimpleMRIRecon";
        let maps = self.k.sensitivity_maps().ok_or_else(|| {
            Error::invalid(
                op,
                "the k-space has no sensitivity maps (attach them with KData::with_sensitivity_maps, or use RSoSRecon)",
            )
        })?;
        let mut images = CoilImages::new(op, &self.k, self.params.centered)?;
        let mut combine = CoilSum::new(&images.images, &self.out, CoilParams::new(images.coil_axis).maps(maps));
        images.init_with(&mut combine)?;
        self.plan.set((images, combine));
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let (images, combine) = self.plan.get("SimpleMRIRecon")?;
        images.launch_with(combine)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// The reconstruction without sensitivity maps: inverse FFT of each coil, then the root sum of squares over the
/// coils ([`RSoS`]). The output is real `[frames…, spatial…]`; k-space is taken as centred unless
/// [`ReconParams::centered`]`(false)`.
///
/// ```
/// use cliper::{ClApp, KData, Process, RSoSRecon, ReconParams, XData};
/// use num_complex::Complex32;
/// let app = ClApp::new()?;
/// let k = KData::<Complex32>::load(&app, "data/kspace.mat")?;
/// let image = XData::<f32>::zeros(&app, &[64, 64])?;
/// RSoSRecon::new(&k, &image, ReconParams::default()).run()?;
/// // With Σ|s_c|² = 1 the root sum of squares of s_c·phantom is |phantom|.
/// let phantom = cliper::SheppLogan::<f32>::reference(&[64, 64])?;
/// let worst = image.to_vec()?.iter().zip(phantom.iter()).map(|(g, p)| (*g as f64 - p.abs()).abs()).fold(0.0, f64::max);
/// assert!(worst < 1e-5, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct RSoSRecon<T: ComplexElement> {
    k: KData<T>,
    out: XData<T::Real>,
    params: ReconParams,
    plan: Prepared<(CoilImages<T>, RSoS<T>)>,
}

impl<T: ComplexElement> RSoSRecon<T> {
    /// Reconstructs `k` into the real image `out` (`[frames…, spatial…]`).
    pub fn new(k: &KData<T>, out: &XData<T::Real>, params: ReconParams) -> RSoSRecon<T> {
        RSoSRecon { k: k.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the image, reconstructs `k` into it once and returns it.
    pub fn apply(k: &KData<T>, params: ReconParams) -> Result<XData<T::Real>> {
        let out = XData::uninit(k.as_xdata().app(), "RSoSRecon", &Self::output_shape(k)?)?;
        RSoSRecon::new(k, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: `k`'s frames and spatial axes, `[frames…, spatial…]`.
    ///
    /// ```
    /// let app = cliper::ClApp::new()?;
    /// let k = cliper::KData::<num_complex::Complex64>::zeros(&app, &[], 4, &[16, 16])?;
    /// assert_eq!(cliper::RSoSRecon::output_shape(&k)?, vec![16, 16]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(k: &KData<T>) -> Result<Vec<usize>> {
        Ok(image_shape(k))
    }

    /// How `init` planned the reconstruction; `None` before `init`.
    pub fn strategy(&self) -> Option<ReconStrategy> {
        self.plan.as_ref().and_then(|(images, combine)| images.strategy(combine.strategy()))
    }
}

impl<T: ComplexElement> Process for RSoSRecon<T> {
    fn name(&self) -> &str {
        "RSoSRecon"
    }

    fn init(&mut self) -> Result<()> {
        let mut images = CoilImages::new("RSoSRecon", &self.k, self.params.centered)?;
        let mut combine = RSoS::new(&images.images, &self.out, images.coil_axis);
        images.init_with(&mut combine)?;
        self.plan.set((images, combine));
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let (images, combine) = self.plan.get("RSoSRecon")?;
        images.launch_with(combine)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
