//! The Fourier filters of scipy.ndimage ([`FourierFilter`]): `fourier_gaussian`, `fourier_uniform`,
//! `fourier_ellipsoid` and `fourier_shift`. Their input is a spectrum already (an FFT, or a real FFT along one
//! axis), so each is one element-wise product by the filter's transfer function at the element's frequency —
//! a family of its own rather than part of `fft`, whose processes transform. Kernels: `kernels/fourier.cl`.

mod filter;

pub use filter::{FourierFilter, FourierKind, FourierParams};
