//! Filtering with scipy.ndimage's and numpy's semantics: border rules ([`Border`]), filter weights ([`Filter`]:
//! named filters, normalisation, the rank-1 split), [`Pad`], [`Convolution`] and [`SeparableConvolution`] (1–3-D,
//! any border, stride, dilation; direct, tiled, separable or FFT algorithms chosen by the planner) and
//! [`GradientMagnitude`] (gaussian_gradient_magnitude and the Sobel/Prewitt/Scharr magnitudes: derivative
//! convolutions, then one element-wise kernel), [`FilterBank`] (cuDNN-style multi-channel convolution: direct, im2col + `MatMul`, an implicit GEMM, or
//! Winograd F(2×2, 3×3) in `bank_winograd.rs`). Kernels:
//! `kernels/filter.cl` (convolution), `filter_pad.cl`, `filter_bank.cl`; on CPU devices `Pad` and the passes of filters
//! along one axis run on the host (`host_pad.rs`, `host_conv.rs`).

mod bank_blocked;
mod bank_winograd;
mod border;
mod conv_params;
mod conv_pass;
mod convolution;
mod fft_conv;
mod filter_bank;
mod gradient_magnitude;
mod host_conv;
mod host_fft_conv;
mod host_pad;
mod pad;
mod separable;
mod weights;

pub use border::Border;
pub use conv_params::{ConvAlgorithm, ConvMode, ConvOutput, ConvParams};
pub use convolution::{ConvStrategy, Convolution};
pub use filter_bank::{FilterBank, FilterBankAlgorithm, FilterBankParams, FilterBankStrategy};
pub use gradient_magnitude::{Derivative, GradientMagnitude, GradientParams, GradientStrategy};
pub use pad::{Pad, PadParams, PadStrategy};
pub use separable::SeparableConvolution;
pub use weights::{Filter, FilterElement};
