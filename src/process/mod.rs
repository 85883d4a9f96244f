//! Processes (operations on device arrays) and [`Pipeline`], which chains them on the device.
//!
//! A process holds its input and output arrays from construction. `init` validates shapes and types, builds
//! kernels, plans the algorithm and allocates scratch; `launch` only enqueues — no planning, no host
//! synchronisation, no host↔device copy — so a chain of launches runs back to back on the device.
//!
//! The operations are grouped in families, one folder each with its kernels in `kernels/<family>*.cl`:
//! [`layout`] (copies between views: transpose, permute, strided copy), [`linalg`] (matrix products and
//! powers), [`reduce`] (norms, dot products), [`filter`] (padding, convolution, filter banks), [`fft`] (Fourier
//! transforms and shifts), [`nufft`] (non-uniform FFTs), [`fourier`] (scipy's Fourier filters on spectra), [`feature`] (peak_local_max), [`mri`] (coil combination, reconstructions), [`elementwise`] (products, masks,
//! complex parts, scaling, fills), [`resample`] (zoom, shift, rotate, affine maps, map_coordinates) and [`phantom`] (test images).

pub mod elementwise;
pub mod feature;
pub mod fft;
pub mod filter;
pub mod fourier;
pub mod layout;
pub mod linalg;
pub mod measure;
pub mod morphology;
pub mod mri;
pub mod nufft;
pub mod phantom;
mod pipeline;
mod planning;
pub mod rank;
pub mod reduce;
pub mod resample;
pub mod segment;
pub mod solve;
pub mod threshold;
pub mod wavelet;

pub(crate) use pipeline::init_together;
pub use pipeline::{KernelTiming, Pipeline, Process, Report};
pub use planning::Prepared;
