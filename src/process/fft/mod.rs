//! Fourier transforms: [`Fft`] (complex, any lengths and axes: register kernels per length or Stockham passes,
//! four-step for long axes, Bluestein for awkward primes), [`RealFft`] / [`InverseRealFft`] (numpy's rfftn and
//! irfftn) and [`FftShift`]. CPU devices run the transforms on the host's threads through rustfft
//! (`host_transform.rs`). Kernels: `kernels/fft.cl`, `fft_lines.cl`, `fft_butterflies.cl`, `fft_shift.cl`.

mod axis_plan;
mod complex_fft;
mod fft_launch;
mod fft_params;
mod fft_plan;
mod fft_strategy;
mod host_fft;
mod host_transform;
mod lines;
mod radix;
mod real_fft;
mod schedule;
mod shift;

pub use complex_fft::Fft;
pub use fft_params::{FftAlgorithm, FftDirection, FftNorm, FftParams};
pub use fft_strategy::{FftAxisStrategy, FftPasses, FftStrategy};
pub(crate) use host_fft::smooth_length;
pub(crate) use host_transform::{HostAxes, real_lines, real_lines_inverse};
pub use real_fft::{InverseRealFft, RealFft, RealFftParams};
pub use shift::{FftShift, FftShiftParams};
