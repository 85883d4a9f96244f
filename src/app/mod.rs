//! [`ClApp`], the device manager: discovery and selection, the OpenCL context and its one in-order queue,
//! device facts, the program caches (in memory per app, and on disk across processes), transfer counters,
//! kernels, and [`DevicePool`]: several devices working through one list of inputs.

mod cl_app;
mod device;
pub(crate) mod ffi;
mod mpi_job;
mod pool;
mod program;
mod program_cache;
pub(crate) mod ptx_patch;

pub use cl_app::{
    BUILD_OPTIONS_ENV, ClApp, ClAppBuilder, DEVICE_ENV, LOG_BUILDS_ENV, MEMORY_LIMIT_ENV, MemoryStats, TransferStats,
    parse_bytes,
};
pub(crate) use cl_app::{DeviceBuffer, copy_buffer, fill_zero, marker};
pub use device::{DeviceInfo, DeviceKind};
#[cfg(feature = "mpi")]
pub use mpi_job::{MpiJob, MpiOutcome};
pub use mpi_job::{RankReport, mpi_launcher_ranks};
pub use pool::{DevicePool, DeviceShare, PoolResult};
pub use program::{Kernel, Program};
pub use program_cache::{CACHE_DIR_ENV, CACHE_ENV, CACHE_MAX_ENV, CacheInfo, ProgramCache};
