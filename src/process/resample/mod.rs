//! Resampling — scipy.ndimage's zoom, shift, affine_transform, rotate ([`Resample`]), map_coordinates
//! ([`MapCoordinates`]) and spline_filter / spline_filter1d ([`SplineFilter`]) — with B-splines of order 0 to 5,
//! scipy's boundary modes ([`InterpMode`]) and prefiltering. `mode.rs` holds scipy's rules for coordinates and
//! taps past the edges (float64, on the host); `spline_filter.rs` the recursive prefilter; `transform.rs` the
//! separable passes and the general gather. Kernels: `kernels/resample.cl`.

mod mode;
mod spline_filter;
mod transform;

pub use mode::InterpMode;
pub use spline_filter::{PrefilterMethod, SplineFilter, SplineParams, SplineStrategy};
pub use transform::{Interpolation, MapCoordinates, Resample, ResampleParams, ResampleStrategy, Transform};
