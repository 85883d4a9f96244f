//! [`WalshMaps`]: coil sensitivity maps by Walsh's method (the principal eigenvector of each pixel's smoothed coil
//! covariance), as ismrmrd-python-tools' `calculate_csm_walsh` computes them, from coil images or from the
//! low-resolution images of k-space's calibration block.

use super::coil_maps::{Calibration, PixelLayout, PixelProgram};
use super::recon::CoilImages;
use crate::app::Kernel;
use crate::data::{KData, XData};
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use crate::process::elementwise::Fill;
use crate::process::{Prepared, Process};

/// The settings of [`WalshMaps`]: ismrmrd-python-tools' defaults (a 5 × 5 smoothing box, 3 power iterations), and
/// for maps from k-space the calibration block's largest extent per axis (24, as ESPIRiT).
///
/// ```
/// let p = cliper::WalshParams::default().smoothing(7);
/// assert_eq!((p.smoothing, p.iterations, p.calibration), (7, 3, 24));
/// assert_eq!(p.work_item_per_pixel(true).work_item_per_pixel, Some(true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalshParams {
    /// The side of the box the covariance is averaged over (scipy's `uniform_filter(size=…)`, 'reflect' border).
    pub smoothing: usize,
    /// Power iterations per pixel.
    pub iterations: usize,
    /// From k-space: the calibration block's largest extent per axis.
    pub calibration: usize,
    /// The per-pixel kernel's layout: one work-item per pixel holding the whole covariance (`Some(true)`, what
    /// CPUs run fastest), or one per pixel and coil holding a row (`Some(false)`, for GPUs); `None` picks by
    /// device kind.
    pub work_item_per_pixel: Option<bool>,
}

impl Default for WalshParams {
    fn default() -> WalshParams {
        WalshParams { smoothing: 5, iterations: 3, calibration: 24, work_item_per_pixel: None }
    }
}

impl WalshParams {
    /// The smoothing box's side.
    pub fn smoothing(mut self, smoothing: usize) -> WalshParams {
        self.smoothing = smoothing;
        self
    }

    /// The power iterations per pixel.
    pub fn iterations(mut self, iterations: usize) -> WalshParams {
        self.iterations = iterations;
        self
    }

    /// The per-pixel kernel's layout (`true`: a work-item per pixel).
    pub fn work_item_per_pixel(mut self, per_pixel: bool) -> WalshParams {
        self.work_item_per_pixel = Some(per_pixel);
        self
    }
}

/// How a [`WalshMaps`] ran, as `strategy()` reports it after a launch.
///
/// ```
/// let s = cliper::WalshStrategy { calibration: Some([24, 24]), pixels_per_group: 32, work_item_per_pixel: false };
/// assert!(s.to_string().contains("[24, 24]"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalshStrategy {
    /// From k-space: the calibration block the images were made of.
    pub calibration: Option<[usize; 2]>,
    /// Pixels per work-group of the per-pixel kernel.
    pub pixels_per_group: usize,
    /// The per-pixel kernel ran a work-item per pixel (else one per pixel and coil).
    pub work_item_per_pixel: bool,
}

impl std::fmt::Display for WalshStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.calibration {
            Some(c) => write!(f, "Walsh: images of the {c:?} calibration block, ")?,
            None => write!(f, "Walsh: ")?,
        }
        write!(
            f,
            "per-pixel power iterations on the device, {} pixels per work-group, a work-item per pixel{}",
            self.pixels_per_group,
            if self.work_item_per_pixel { "" } else { " and coil" }
        )
    }
}

/// Where the coil images come from.
enum Source<T: ComplexElement> {
    /// Given images `[coils, x, y]`.
    Images(XData<T>),
    /// Centred k-space `[coils, x, y]`: its calibration block alone (zero elsewhere), inverse FFT.
    KSpace(KData<T>),
}

/// Coil maps by Walsh's method (Walsh, Gmitro & Marcellin 2000), with the semantics of ismrmrd-python-tools'
/// `calculate_csm_walsh`: per pixel, the coil covariance R = img · imgᴴ averaged over a `smoothing` ×
/// `smoothing` box (scipy's `uniform_filter`, 'reflect' border), then `iterations` power iterations from R's
/// normalised column sums; the map is the unit eigenvector (no crop, no phase reference: its phase is what the
/// iterations give). Images and maps are `[coils, x, y]`.
///
/// [`WalshMaps::from_kspace`] makes the images as `bart caldir` does: the fully sampled calibration block of
/// centred k-space (found as ESPIRiT finds it), zero elsewhere, inverse FFT with the shifts. Where ESPIRiT's maps
/// fall to 0 outside the object, Walsh's stay unit vectors (noise there); within it the two agree up to a
/// per-pixel phase.
///
/// ```
/// use cliper::{KData, Process, WalshMaps, WalshParams, XData};
/// use num_complex::Complex32;
/// let app = cliper::ClApp::new()?;
/// let k = KData::<Complex32>::load(&app, "tests/fixtures/bart/phantom8.cfl")?;
/// let maps = XData::zeros(&app, &[8, 96, 96])?;
/// WalshMaps::from_kspace(&k, &maps, WalshParams::default()).run()?;
/// let s = maps.to_vec()?;
/// let norm: f32 = (0..8).map(|c| s[c * 96 * 96 + 48 * 96 + 48].norm_sqr()).sum();
/// assert!((norm - 1.0).abs() < 1e-4); // a unit vector per pixel
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct WalshMaps<T: ComplexElement> {
    source: Source<T>,
    maps: XData<T>,
    params: WalshParams,
    plan: Prepared<Plan<T>>,
}

struct Plan<T: ComplexElement> {
    eigen: Kernel,
    layout: PixelLayout,
    images: Option<BlockImages<T>>,
    calibration: Option<[usize; 2]>,
}

/// From k-space: the calibration block's k-space (zero elsewhere, cleared on the device before each block is
/// copied in) and the steps to its images.
struct BlockImages<T: ComplexElement> {
    block: XData<T>,
    clear: Fill<T>,
    steps: CoilImages<T>,
}

impl<T: ComplexElement> WalshMaps<T> {
    /// Maps of coil images `[coils, x, y]` into `maps` (the same shape).
    pub fn new(images: &XData<T>, maps: &XData<T>, params: WalshParams) -> WalshMaps<T> {
        WalshMaps { source: Source::Images(images.clone()), maps: maps.clone(), params, plan: Prepared::default() }
    }

    /// Maps of centred 2-D k-space `[coils, x, y]` (one frame), from the images of its calibration block.
    pub fn from_kspace(k: &KData<T>, maps: &XData<T>, params: WalshParams) -> WalshMaps<T> {
        WalshMaps { source: Source::KSpace(k.clone()), maps: maps.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the maps of coil images, computes them once and returns them.
    pub fn apply(images: &XData<T>, params: WalshParams) -> Result<XData<T>> {
        let maps = XData::uninit(images.app(), "WalshMaps", &Self::output_shape(images.shape())?)?;
        WalshMaps::new(images, &maps, params).run()?;
        Ok(maps)
    }

    /// The maps' shape: the images' (or the k-space's) `[coils, x, y]`.
    pub fn output_shape(shape: &[usize]) -> Result<Vec<usize>> {
        match shape {
            [_, _, _] => Ok(shape.to_vec()),
            _ => Err(Error::invalid(
                "WalshMaps",
                format!("input of shape {shape:?}: Walsh's method takes one 2-D frame [coils, x, y]"),
            )),
        }
    }

    /// The images' source and the launch geometry, after `init`.
    pub fn strategy(&self) -> Option<WalshStrategy> {
        let plan = self.plan.as_ref()?;
        Some(WalshStrategy {
            calibration: plan.calibration,
            pixels_per_group: plan.layout.pixels_per_group(),
            work_item_per_pixel: plan.layout.serial,
        })
    }

    fn input_shape(&self) -> &[usize] {
        match &self.source {
            Source::Images(x) => x.shape(),
            Source::KSpace(k) => k.as_xdata().shape(),
        }
    }
}

impl<T: ComplexElement> Process for WalshMaps<T> {
    fn name(&self) -> &str {
        "WalshMaps"
    }

    fn init(&mut self) -> Result<()> {
        let op = "WalshMaps";
        let shape = Self::output_shape(self.input_shape())?;
        if self.maps.shape() != shape.as_slice() {
            return Err(Error::shape_because(op, &shape, self.maps.shape(), "maps of the input's shape"));
        }
        if !self.maps.is_packed() {
            return Err(Error::invalid(
                op,
                "the maps must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        if let Source::Images(x) = &self.source
            && !x.is_packed()
        {
            return Err(Error::invalid(
                op,
                "the coil images must be contiguous from its buffer's start (XData::contiguous makes a copy)",
            ));
        }
        let p = self.params;
        if p.smoothing == 0 || p.iterations == 0 {
            return Err(Error::invalid(op, format!("settings {p:?}: the smoothing box and iterations must be ≥ 1")));
        }
        let app = self.maps.app();
        let program = PixelProgram::new::<T>(op, app, shape.first().copied().unwrap_or(1), p.work_item_per_pixel)?;
        let images = match &self.source {
            Source::Images(_) => None,
            Source::KSpace(_) => {
                let k = KData::new(XData::zeros(app, &shape)?, 2)?;
                let mut steps = CoilImages::new(op, &k, true)?;
                steps.init()?;
                let block = k.as_xdata().clone();
                let mut clear = Fill::new(&block, T::default());
                clear.init()?;
                Some(BlockImages { block, clear, steps })
            }
        };
        let eigen = program.eigen_kernel(op, "walsh_eigen")?;
        self.plan.set(Plan { eigen, layout: program.layout, images, calibration: None });
        Ok(())
    }

    /// From k-space, reads the calibration band back (waits for the device) to find the block; then enqueues the
    /// images and the per-pixel work.
    fn launch(&mut self) -> Result<()> {
        let op = "WalshMaps";
        let p = self.params;
        let shape = self.maps.shape().to_vec();
        let [coils, nx, ny] = shape[..] else { return Err(Error::invalid(op, "not 2-D")) };
        let plan = self.plan.get(op)?;
        let images = match (&self.source, &mut plan.images) {
            (Source::Images(x), _) => x.clone(),
            (Source::KSpace(k), Some(BlockImages { block, clear, steps })) => {
                let cal = Calibration::find(op, k, p.calibration)?;
                let ([cx, cy, _], [x0, y0, _]) = (cal.extent, cal.start);
                clear.launch()?;
                let window = |x: &XData<T>| x.slice_axis(1, x0..x0 + cx)?.slice_axis(2, y0..y0 + cy);
                window(block)?.copy_from(&window(k.as_xdata())?)?;
                steps.launch()?;
                plan.calibration = Some([cx, cy]);
                steps.images.clone()
            }
            (Source::KSpace(_), None) => return Err(Error::NotInitialized { op: op.into() }),
        };
        let as_u32 = |n: usize| u32::try_from(n).map_err(|_| Error::invalid(op, format!("{n} is too large")));
        let (global, group) = plan.layout.geometry(coils, nx, ny);
        plan.eigen
            .launch()
            .input("img", &images)
            .output("maps", &self.maps)
            .scalar("nx", as_u32(nx)?)
            .scalar("ny", as_u32(ny)?)
            .scalar("box", as_u32(p.smoothing)?)
            .scalar("iterations", as_u32(p.iterations)?)
            .global(&[global])
            .local(&[group])
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
