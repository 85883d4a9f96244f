//! MRI: coil combination ([`CoilSum`], with or without sensitivity maps; [`RSoS`]) planned by the coil planner
//! (`coil_plan.rs`), the reconstructions of k-space data built from the FFT and coil steps
//! ([`SimpleMRIRecon`], [`RSoSRecon`]), the Cartesian SENSE operator ([`SenseOperator`]) and the non-Cartesian one ([`NufftSenseOperator`], SENSE reconstructions with it and a [`SensePenalty`]: [`NufftSense`]) and iterative
//! reconstruction with it ([`CgSense`]; BART's default data scaling, [`BartScaling`]; compressed sensing: [`L1WaveletSense`], [`TvSense`]), and coil maps
//! estimated from the data ([`EspiritMaps`], [`WalshMaps`]; what they share: `coil_maps.rs`). Kernels: `kernels/mri.cl`.

mod bart_scaling;
mod cg_sense;
mod coil_compression;
mod coil_maps;
mod coil_plan;
mod coil_sum;
mod espirit;
mod l1_wavelet;
mod nufft_sense;
mod recon;
mod rsos;
mod sense;
mod trajectory;
mod tv_sense;
mod walsh;

pub use bart_scaling::BartScaling;
pub use cg_sense::{CgSense, CgSenseStrategy};
pub use coil_compression::{CoilCompression, CompressionMethod, CompressionParams};
pub use espirit::{EspiritMaps, EspiritParams, EspiritStrategy};
pub use l1_wavelet::{L1WaveletParams, L1WaveletSense, L1WaveletStrategy};
pub use nufft_sense::{NufftSense, NufftSenseOperator, SensePenalty};
pub use sense::SenseOperator;
pub use trajectory::{BartTrajectory, TrajectoryParams};
pub use tv_sense::{TvSense, TvStrategy};
pub use walsh::{WalshMaps, WalshParams, WalshStrategy};

pub use coil_plan::CoilStrategy;
pub use coil_sum::{CoilParams, CoilSum};
pub use recon::{RSoSRecon, ReconParams, ReconStrategy, SimpleMRIRecon};
pub use rsos::RSoS;
