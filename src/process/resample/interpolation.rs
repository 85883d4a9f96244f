//! What both interpolating processes share: the settings ([`Interpolation`]: order, mode, cval, prefilter) and
//! the report of what `init` planned ([`ResampleStrategy`]).

use super::mode::InterpMode;
use super::spline_filter::PrefilterMethod;
use crate::error::{Error, Result};
use num_complex::Complex64;

/// The interpolation settings shared by [`Resample`](super::Resample) and [`MapCoordinates`](super::MapCoordinates),
/// scipy's defaults: cubic splines (`order` 3), mode `constant`, `cval` 0, prefiltering on (`prefilter = false`
/// takes the input as B-spline coefficients already, e.g. from [`crate::SplineFilter`]).
///
/// ```
/// use cliper::{InterpMode, Interpolation};
/// let i = Interpolation::new(1).mode(InterpMode::Nearest).cval(-1000.0);
/// assert_eq!((i.order, i.mode, i.cval.re, i.prefilter), (1, InterpMode::Nearest, -1000.0, true));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interpolation {
    /// The spline order, 0 (nearest sample) to 5; 1 is linear, 3 cubic.
    pub order: usize,
    /// How the input extends past its edges.
    pub mode: InterpMode,
    /// The value outside for `constant` and `grid-constant` (complex data takes both parts).
    pub cval: Complex64,
    /// Whether to compute the B-spline coefficients first (orders above 1).
    pub prefilter: bool,
}

impl Default for Interpolation {
    fn default() -> Interpolation {
        Interpolation { order: 3, mode: InterpMode::Constant, cval: Complex64::default(), prefilter: true }
    }
}

impl Interpolation {
    /// Order `order`, the other settings scipy's defaults.
    pub fn new(order: usize) -> Interpolation {
        Interpolation { order, ..Interpolation::default() }
    }
    /// Sets the mode.
    pub fn mode(mut self, mode: InterpMode) -> Interpolation {
        self.mode = mode;
        self
    }
    /// Sets a real `cval`.
    pub fn cval(mut self, cval: f64) -> Interpolation {
        self.cval = Complex64::new(cval, 0.0);
        self
    }
    /// Sets a complex `cval`.
    pub fn cval_complex(mut self, cval: Complex64) -> Interpolation {
        self.cval = cval;
        self
    }
    /// Turns prefiltering on or off.
    pub fn prefilter(mut self, on: bool) -> Interpolation {
        self.prefilter = on;
        self
    }

    pub(super) fn check(&self, op: &str) -> Result<()> {
        if self.order > 5 {
            return Err(Error::invalid(op, format!("spline order {} is not supported: use 0 to 5", self.order)));
        }
        Ok(())
    }

    /// Samples added per side of each interpolated axis before prefiltering.
    pub(super) fn pad(&self) -> usize {
        if self.prefilter && self.order > 1 { self.mode.prepad() } else { 0 }
    }
}

/// What a [`Resample`](super::Resample) or [`MapCoordinates`](super::MapCoordinates) runs.
///
/// ```
/// use cliper::{ClApp, Process, Resample, ResampleParams, ResampleStrategy, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[6, 7])?;
/// let mut p = Resample::new(&x, &XData::zeros(&app, &[12, 7])?, ResampleParams::zoom(&[2.0, 1.0]));
/// p.init()?;
/// let Some(ResampleStrategy::Separable { prefilter, passes }) = p.strategy() else { unreachable!() };
/// assert_eq!((prefilter.passes(), passes), (1, vec![0]));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResampleStrategy {
    /// Nothing to interpolate (an identity map): a copy.
    Copy,
    /// Prefilter passes, then one interpolation pass per axis in the order listed (shrinking axes first, so the
    /// intermediate arrays stay small).
    Separable {
        /// The prefilter (one pass per interpolated axis with order > 1 and prefilter on).
        prefilter: PrefilterMethod,
        /// The axes interpolated, in order.
        passes: Vec<usize>,
    },
    /// Prefilter passes, then one gather kernel: `(order + 1)^axes` taps per output element.
    Gather {
        /// The prefilter.
        prefilter: PrefilterMethod,
        /// The axes interpolated.
        axes: usize,
        /// Whether coordinates are computed in float64 on the device.
        double_coordinates: bool,
    },
}

impl std::fmt::Display for ResampleStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResampleStrategy::Copy => write!(f, "identity map: copy"),
            ResampleStrategy::Separable { prefilter, passes } => {
                write!(f, "prefilter: {prefilter}; separable interpolation along axes {passes:?}")
            }
            ResampleStrategy::Gather { prefilter, axes, double_coordinates } => write!(
                f,
                "prefilter: {prefilter}; one gather over {axes} axes (coordinates in {})",
                if *double_coordinates { "float64" } else { "float32" }
            ),
        }
    }
}
