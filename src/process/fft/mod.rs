//! Fourier transforms: [`Fft`] (complex, any lengths and axes: register kernels per length or Stockham passes,
//! four-step for long axes, Bluestein for awkward primes), [`RealFft`] / [`InverseRealFft`] (numpy's rfftn and
//! irfftn) and [`FftShift`]. Kernels: `kernels/fft.cl`, `fft_lines.cl`, `fft_butterflies.cl`, `fft_shift.cl`.

mod complex_fft;
mod lines;
mod radix;
mod real_fft;
mod schedule;
mod shift;

pub(crate) use complex_fft::smooth_length;
pub use complex_fft::{Fft, FftAlgorithm, FftAxisStrategy, FftDirection, FftNorm, FftParams, FftPasses, FftStrategy};
pub use real_fft::{InverseRealFft, RealFft, RealFftParams};
pub use shift::{FftShift, FftShiftParams};
