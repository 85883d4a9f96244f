//! Resampling — scipy.ndimage's zoom, shift, affine_transform, rotate ([`Resample`]), map_coordinates
//! ([`MapCoordinates`]) and spline_filter / spline_filter1d ([`SplineFilter`]) — with B-splines of order 0 to 5,
//! scipy's boundary modes ([`InterpMode`]) and prefiltering. `mode.rs` holds scipy's rules for coordinates and
//! taps past the edges (float64, on the host); `spline_filter.rs` the recursive prefilter; `interpolation.rs` the
//! settings both processes share; `resample_params.rs` the maps; `interp_plan.rs` the separable passes and the
//! general gather; `geometric_transform.rs` ([`Resample`]) and `map_coordinates.rs` the processes. Kernels:
//! `kernels/resample.cl`.

mod geometric_transform;
mod interp_plan;
mod interpolation;
mod map_coordinates;
mod mode;
mod resample_params;
mod spline_filter;

pub use geometric_transform::Resample;
pub use interpolation::{Interpolation, ResampleStrategy};
pub use map_coordinates::MapCoordinates;
pub use mode::InterpMode;
pub use resample_params::{ResampleParams, Transform};
pub use spline_filter::{PrefilterMethod, SplineFilter, SplineParams, SplineStrategy};
