//! [`ClApp`], the device manager: discovery and selection, the OpenCL context and its one in-order queue,
//! device facts, the program cache, transfer counters, and kernels.

mod cl_app;
mod device;
pub(crate) mod ffi;
mod program;

pub use cl_app::{BUILD_OPTIONS_ENV, ClApp, ClAppBuilder, DEVICE_ENV, MemoryStats, TransferStats};
pub(crate) use cl_app::{DeviceBuffer, copy_buffer, fill_zero};
pub use device::{DeviceInfo, DeviceKind};
pub use program::{Kernel, Program};
