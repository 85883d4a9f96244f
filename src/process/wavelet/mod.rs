//! Wavelet transforms ([`Wavelet`]): the multilevel Daubechies-2 analysis and synthesis over the axes of an
//! image, as BART's `pics -l1` uses them and as PyWavelets computes them (`mode="symmetric"`); the coefficient
//! layout is documented on [`WaveletParams`]. Kernels: `kernels/wavelet.cl`.

mod plan;
mod threshold;
mod transform;

pub use threshold::{BartShifts, WaveletThreshold};
pub use transform::{ShapedWaveletParams, Wavelet, WaveletParams, WaveletStrategy};
