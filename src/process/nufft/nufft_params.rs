//! What a [`super::Nufft`] is asked for: the tolerance and the upsampling of its fine grid.

use super::bart_kernel;
use super::spreading_kernel::SpreadingKernel;
use crate::error::{Error, Result};

/// The fine grid's size over the image's: 2 (the classical choice), 1.25 (a 2.4× smaller fine grid in 2-D for a
/// wider kernel: pays where the FFT costs more than the spreading, few points on a large grid), or chosen per
/// plan from the cost of both.
///
/// ```
/// use cliper::{NufftParams, Upsampling};
/// assert_eq!(NufftParams::default().upsampling_value(), Upsampling::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Upsampling {
    /// The cheaper of 2 and 1.25 for the plan's points and grid, by a model of the spreading's and the FFT's work.
    #[default]
    Auto,
    /// A fixed factor in (1, 4].
    Factor(f64),
}

/// How type 1 spreads a bin's points into its tile: chosen per device (`Auto`: one work-item per bin adding
/// points in turn on CPUs, work-items owning tile lines with the tile in local memory on GPUs), or either way on
/// any device (for tuning, and so that every device's tests run both).
///
/// ```
/// use cliper::{NufftParams, Spreading};
/// let p = NufftParams::default().spreading(Spreading::Lines { local_tile: true });
/// assert_eq!(p.spreading_value(), Spreading::Lines { local_tile: true });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Spreading {
    /// Per device: point-major on CPUs, lines with a local tile on GPUs.
    #[default]
    Auto,
    /// One work-item per bin adds each point's taps in turn.
    PointMajor,
    /// A work-group per bin, its work-items owning whole lines of the tile, kept in local memory or not.
    Lines {
        /// Keep the tile in local memory while adding (when it fits in a third of it).
        local_tile: bool,
    },
}

/// The kernel a [`super::Nufft`] spreads with: FINUFFT's "exponential of semicircle", sized for the tolerance
/// (the default), or BART 0.8's own gridding — to reproduce `bart nufft`/`pics -t` to float32's rounding, errors
/// included (its tabulated Kaiser–Bessel kernel errs by about 1e-2 of the exact sums; the tolerance is then
/// ignored).
///
/// ```
/// use cliper::{NufftKernel, NufftParams};
/// assert_eq!(NufftParams::default().kernel_value(), NufftKernel::ExpSemicircle);
/// let bart = NufftParams::default().kernel(NufftKernel::Bart { periodic: false });
/// assert_eq!(bart.kernel_value(), NufftKernel::Bart { periodic: false });
/// // BART's grid is exactly 2N; odd sizes are refused (bart nufft shifts them by half a sample).
/// let app = cliper::ClApp::new()?;
/// let points = cliper::NufftPoints::new(&[15, 16], vec![0.5, -2.0])?;
/// let refused = cliper::Nufft::<num_complex::Complex32>::new(&app, &points, 1, bart).err().unwrap();
/// assert!(refused.to_string().contains("odd size 15"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NufftKernel {
    /// The "exponential of semicircle" kernel, its width and the upsampling chosen for the tolerance.
    #[default]
    ExpSemicircle,
    /// BART's Kaiser–Bessel table (half-width 3, β 13.86, linear interpolation over 99 intervals), its roll-off
    /// correction, upsampling exactly 2. `periodic: false` is `bart nufft`'s grid, which drops the taps past its
    /// edges; `true` wraps them, as BART's Toeplitz point-spread function is gridded.
    Bart {
        /// Wrap taps past the grid's edges (BART drops them except for its Toeplitz kernel).
        periodic: bool,
    },
}

/// The parameters of a [`super::Nufft`]: the relative tolerance ε (the ℓ2 error over all outputs relative to the
/// outputs' norm, as FINUFFT defines it; default 1e-6) and the [`Upsampling`].
///
/// ```
/// use cliper::{NufftParams, Upsampling};
/// let p = NufftParams::default().tolerance(1e-9).upsampling(Upsampling::Factor(2.0));
/// assert_eq!(p.tolerance_value(), 1e-9);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NufftParams {
    tolerance: f64,
    upsampling: Upsampling,
    spreading: Spreading,
    kernel: NufftKernel,
}

impl Default for NufftParams {
    fn default() -> NufftParams {
        NufftParams {
            tolerance: 1e-6,
            upsampling: Upsampling::Auto,
            spreading: Spreading::Auto,
            kernel: NufftKernel::ExpSemicircle,
        }
    }
}

impl NufftParams {
    /// The relative tolerance ε in [1e-14, 1e-1] (complex64 data: at least 1e-6, what float32 reaches).
    pub fn tolerance(mut self, tolerance: f64) -> NufftParams {
        self.tolerance = tolerance;
        self
    }

    /// The fine grid's upsampling.
    pub fn upsampling(mut self, upsampling: Upsampling) -> NufftParams {
        self.upsampling = upsampling;
        self
    }

    /// How type 1 spreads ([`Spreading`]).
    pub fn spreading(mut self, spreading: Spreading) -> NufftParams {
        self.spreading = spreading;
        self
    }

    /// The kernel ([`NufftKernel`]).
    pub fn kernel(mut self, kernel: NufftKernel) -> NufftParams {
        self.kernel = kernel;
        self
    }

    /// The kernel asked for.
    pub fn kernel_value(&self) -> NufftKernel {
        self.kernel
    }

    /// The spreading asked for.
    pub fn spreading_value(&self) -> Spreading {
        self.spreading
    }

    /// The tolerance asked for.
    pub fn tolerance_value(&self) -> f64 {
        self.tolerance
    }

    /// The upsampling asked for.
    pub fn upsampling_value(&self) -> Upsampling {
        self.upsampling
    }

    /// The kernel for `points` points on an image of `shape`, with the fine grid's size per axis; `double`: the
    /// data are complex128 (complex64's float32 allows ε ≥ 1e-6 only).
    pub(super) fn choose(&self, shape: &[usize], points: usize, double: bool) -> Result<(SpreadingKernel, Vec<usize>)> {
        if let NufftKernel::Bart { .. } = self.kernel {
            return bart_plan(shape);
        }
        let floor = if double { 1e-14 } else { 1e-6 };
        if !(self.tolerance >= floor && self.tolerance <= 0.1) {
            let kind = if double { "complex128" } else { "complex64 (float32 reaches 1e-6; use complex128 below)" };
            return Err(Error::invalid(
                "Nufft",
                format!("tolerance {:e} is outside [{floor:e}, 0.1] for {kind}", self.tolerance),
            ));
        }
        let plan = |sigma: f64| -> Result<(SpreadingKernel, Vec<usize>)> {
            // A small upsampling divides the spectrum's edge by a small kernel transform, which magnifies float32's
            // rounding: measured 1.5e-5 at ε = 1e-5 for upsampling 1.25 against 5e-7 at 2 (tests/fft/nufft.rs).
            if !double && sigma < 2.0 && self.tolerance < 1e-4 {
                return Err(Error::invalid(
                    "Nufft",
                    format!(
                        "upsampling {sigma} in complex64 reaches tolerance 1e-4 at best (float32's rounding is \
                         magnified at the spectrum's edge); asked {:e}: use upsampling 2 or complex128",
                        self.tolerance
                    ),
                ));
            }
            // The width rules bound each axis's error by about ε, and the axes' errors add: measured up to 4.4 ε
            // in 3-D (tests/fft/nufft.rs). Designing for ε / 4d keeps the achieved error below ε.
            let design = self.tolerance / (4.0 * shape.len() as f64);
            let kernel = SpreadingKernel::for_tolerance(design, sigma)?;
            let fine = shape
                .iter()
                .map(|&n| {
                    let wanted = ((n as f64 * sigma).ceil() as usize).max(2 * kernel.width + 4);
                    crate::process::fft::smooth_length(wanted)
                })
                .collect();
            Ok((kernel, fine))
        };
        match self.upsampling {
            Upsampling::Factor(sigma) => plan(sigma),
            Upsampling::Auto => {
                let two = plan(2.0)?;
                // 1.25 cannot reach the smallest tolerances within the widest kernel.
                Ok(match plan(1.25) {
                    Ok(one_quarter) if cost(&one_quarter, points) < cost(&two, points) => one_quarter,
                    _ => two,
                })
            }
        }
    }
}

/// BART's kernel on a grid of exactly 2N per axis (even N); the tile machinery needs at least 2·7 + 4 cells per axis.
fn bart_plan(shape: &[usize]) -> Result<(SpreadingKernel, Vec<usize>)> {
    if let Some(&n) = shape.iter().find(|&&n| n < 9) {
        return Err(Error::invalid(
            "Nufft",
            format!("image {shape:?}: BART's kernel (7 taps on a grid of 2N) needs at least 9 cells per axis; got {n}"),
        ));
    }
    // Measured with bart 0.8.00 on deltas: on an odd axis `bart nufft` turns pixel r by about −πr/N whatever k is (as
    // if each k were shifted by ½; 0.5π at the edges of 15), which this port does not reproduce.
    if let Some(&n) = shape.iter().find(|&&n| n % 2 == 1) {
        return Err(Error::invalid(
            "Nufft",
            format!(
                "image {shape:?}: BART's kernel takes even sizes (bart nufft shifts an axis of odd size {n} by half a \
                 sample, which is not reproduced); use the default kernel"
            ),
        ));
    }
    let kernel = SpreadingKernel { width: bart_kernel::TAPS, beta: bart_kernel::beta(), upsampling: 2.0 };
    Ok((kernel, shape.iter().map(|n| 2 * n).collect()))
}

/// A model of a transform's work: the spreading's multiply-adds (w^d per point, 4 flops each) and the FFT's
/// `5 n log₂ n` flops; deconvolution and padding are small beside them.
fn cost((kernel, fine): &(SpreadingKernel, Vec<usize>), points: usize) -> f64 {
    let taps = (kernel.width as f64).powi(fine.len() as i32);
    let cells: f64 = fine.iter().map(|&n| n as f64).product();
    4.0 * taps * points as f64 + 5.0 * cells * cells.log2().max(1.0)
}
