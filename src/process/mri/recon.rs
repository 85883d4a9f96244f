//! [`SimpleMRIRecon`] and [`RSoSRecon`]: image reconstruction from fully sampled (or zero-filled) k-space.

use super::coil_sum::CoilSum;
use super::rsos::RSoS;
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::process::fft::{Fft, FftParams, FftShift, FftShiftParams};
use crate::process::{Prepared, Process};

/// The inverse FFT of every coil over the spatial axes, with the shifts for k-space stored centred: the
/// processes and scratch arrays both reconstructions share. Leaves coil images `[frames…, coils, spatial…]`.
struct CoilImages<T: ComplexElement> {
    steps: Vec<Box<dyn Process>>,
    images: XData<T>,
    coil_axis: usize,
}

impl<T: ComplexElement> CoilImages<T> {
    fn new(op: &str, k: &KData<T>, centered: bool) -> Result<CoilImages<T>> {
        let data = k.as_xdata();
        let app = data.app();
        // [frames…, coils, spatial…]: the coil axis follows the frame axes.
        let coil_axis = k.frame_shape().len();
        let spatial: Vec<usize> = (coil_axis + 1..data.ndim()).collect();
        let images = XData::uninit(app, op, data.shape())?;
        let mut steps: Vec<Box<dyn Process>> = Vec::new();
        if centered {
            // ifftshift → ifft → fftshift, numpy's recipe for centred k-space.
            let shifted = XData::uninit(app, op, data.shape())?;
            let spectrum = XData::uninit(app, op, data.shape())?;
            steps.push(Box::new(FftShift::new(data, &shifted, FftShiftParams::inverse().axes(&spatial))));
            steps.push(Box::new(Fft::new(&shifted, &spectrum, FftParams::inverse().axes(&spatial))));
            steps.push(Box::new(FftShift::new(&spectrum, &images, FftShiftParams::default().axes(&spatial))));
        } else {
            steps.push(Box::new(Fft::new(data, &images, FftParams::inverse().axes(&spatial))));
        }
        Ok(CoilImages { steps, images, coil_axis })
    }

    /// Initialises the steps, then `combine` (which reads `images`).
    fn init_with(&mut self, combine: &mut dyn Process) -> Result<()> {
        self.steps.iter_mut().try_for_each(|s| s.init())?;
        combine.init()
    }

    /// Launches the steps, then `combine`.
    fn launch_with(&mut self, combine: &mut dyn Process) -> Result<()> {
        self.steps.iter_mut().try_for_each(|s| s.launch())?;
        combine.launch()
    }
}

/// OpenCLIPER's SimpleMRIRecon: the inverse FFT of each coil's k-space over the spatial axes (numpy's `ifftn`,
/// "backward" normalisation), then `Σ_c image_c · conj(s_c)` with the [`KData`]'s sensitivity maps (fused in
/// one kernel, [`CoilSum::with_maps`]). The output is complex `[frames…, spatial…]`. With maps normalised to
/// `Σ_c |s_c|² = 1` and complete k-space this returns the object exactly.
///
/// k-space is taken as stored centred (zero frequency in the middle, as scanners and `data/kspace.mat` store it:
/// `ifftshift` before and `fftshift` after the transform); [`SimpleMRIRecon::centered`]`(false)` takes it as
/// numpy's `fft` leaves it.
///
/// ```
/// use cliper::{ClApp, KData, Process, SimpleMRIRecon, XData};
/// use num_complex::Complex32;
/// let app = ClApp::new()?;
/// let k = KData::<Complex32>::load(&app, "data/kspace.mat")?; // 8 coils, 64², maps attached
/// let image = XData::zeros(&app, &[64, 64])?;
/// let mut recon = SimpleMRIRecon::new(&k, &image);
/// recon.init()?;
/// recon.launch()?;
/// let phantom = cliper::SheppLogan::<f32>::reference(&[64, 64])?;
/// let got = image.to_vec()?;
/// let worst = got.iter().zip(phantom.iter()).map(|(g, p)| (g.re as f64 - p).abs().max(g.im.abs() as f64)).fold(0.0, f64::max);
/// assert!(worst < 1e-5, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct SimpleMRIRecon<T: ComplexElement> {
    k: KData<T>,
    out: XData<T>,
    centered: bool,
    plan: Prepared<(CoilImages<T>, CoilSum<T>)>,
}

impl<T: ComplexElement> SimpleMRIRecon<T> {
    /// Reconstructs `k` (which must carry sensitivity maps) into `out` (`[frames…, spatial…]`).
    pub fn new(k: &KData<T>, out: &XData<T>) -> SimpleMRIRecon<T> {
        SimpleMRIRecon { k: k.clone(), out: out.clone(), centered: true, plan: Prepared::default() }
    }

    /// Whether k-space is stored centred (default true).
    pub fn centered(mut self, centered: bool) -> SimpleMRIRecon<T> {
        self.centered = centered;
        self
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
        let mut images = CoilImages::new(op, &self.k, self.centered)?;
        let mut combine = CoilSum::new(&images.images, images.coil_axis, &self.out).with_maps(maps);
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
/// [`RSoSRecon::centered`]`(false)`.
///
/// ```
/// use cliper::{ClApp, KData, Process, RSoSRecon, XData};
/// use num_complex::Complex32;
/// let app = ClApp::new()?;
/// let k = KData::<Complex32>::load(&app, "data/kspace.mat")?;
/// let image = XData::<f32>::zeros(&app, &[64, 64])?;
/// let mut recon = RSoSRecon::new(&k, &image);
/// recon.init()?;
/// recon.launch()?;
/// // With Σ|s_c|² = 1 the root sum of squares of s_c·phantom is |phantom|.
/// let phantom = cliper::SheppLogan::<f32>::reference(&[64, 64])?;
/// let worst = image.to_vec()?.iter().zip(phantom.iter()).map(|(g, p)| (*g as f64 - p.abs()).abs()).fold(0.0, f64::max);
/// assert!(worst < 1e-5, "{worst}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct RSoSRecon<T: ComplexElement> {
    k: KData<T>,
    out: XData<T::Real>,
    centered: bool,
    plan: Prepared<(CoilImages<T>, RSoS<T>)>,
}

impl<T: ComplexElement> RSoSRecon<T> {
    /// Reconstructs `k` into the real image `out` (`[frames…, spatial…]`).
    pub fn new(k: &KData<T>, out: &XData<T::Real>) -> RSoSRecon<T> {
        RSoSRecon { k: k.clone(), out: out.clone(), centered: true, plan: Prepared::default() }
    }

    /// Whether k-space is stored centred (default true).
    pub fn centered(mut self, centered: bool) -> RSoSRecon<T> {
        self.centered = centered;
        self
    }
}

impl<T: ComplexElement> Process for RSoSRecon<T> {
    fn name(&self) -> &str {
        "RSoSRecon"
    }

    fn init(&mut self) -> Result<()> {
        let mut images = CoilImages::new("RSoSRecon", &self.k, self.centered)?;
        let mut combine = RSoS::new(&images.images, images.coil_axis, &self.out);
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
