//! Non-uniform FFTs (NUFFT): [`Nufft`] (type 1 and type 2 in 1 to 3 dimensions, BART's convention, a user
//! tolerance; as a process between two arrays: [`NufftTransform`], and at coordinates that are an array: [`NufftAtCoords`]; its normal operator by the Toeplitz embedding:
//! [`NufftNormal`]), its points ([`NufftPoints`]; their density compensation weights, Pipe–Menon's: [`DensityCompensation`]), parameters ([`NufftParams`], [`Upsampling`], [`NufftKernel`]: FINUFFT's or BART's own) and kernel
//! ([`SpreadingKernel`]). Kernels: `kernels/nufft.cl`.

mod at_coords;
mod bart_kernel;
mod bart_layout;
mod density;
mod nufft_params;
mod nufft_transform;
mod points;
mod spreading_kernel;
mod toeplitz;
mod transform;

pub use at_coords::NufftAtCoords;
pub use bart_layout::{
    bart_frame, bart_frame_dim, bart_image_axes, bart_image_dims, images_from_bart, images_to_bart, samples_from_bart,
    samples_to_bart,
};
pub use density::{DcfParams, DensityCompensation};
pub use nufft_params::{NufftKernel, NufftParams, Spreading, Upsampling};
pub use nufft_transform::{NufftDirection, NufftTransform};
pub use points::NufftPoints;
pub use spreading_kernel::{GaussLegendre, MAX_WIDTH, SpreadingKernel};
pub use toeplitz::NufftNormal;
pub use transform::{Nufft, NufftStrategy};
