//! MRI: coil combination ([`CoilSum`], with or without sensitivity maps; [`RSoS`]) planned by the coil planner
//! (`coil_plan.rs`), and the reconstructions of k-space data built from the FFT and coil steps
//! ([`SimpleMRIRecon`], [`RSoSRecon`]). Kernels: `kernels/mri.cl`.

mod coil_plan;
mod coil_sum;
mod recon;
mod rsos;

pub use coil_plan::CoilStrategy;
pub use coil_sum::{CoilParams, CoilSum};
pub use recon::{RSoSRecon, ReconParams, ReconStrategy, SimpleMRIRecon};
pub use rsos::RSoS;
