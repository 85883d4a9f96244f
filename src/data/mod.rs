//! Arrays on the device: [`XData`] (N-d real or complex arrays with strides), [`KData`] (k-space data with
//! coils, frames, sensitivity maps and a sampling mask), the storage they share, and kernel launches on them
//! ([`Launch`]) with the bookkeeping that makes a failed producer visible to every reader.

mod command;
mod host_command;
mod kdata;
mod launch;
mod layout;
mod storage;
mod xdata;

pub use kdata::KData;
pub use launch::{Launch, checked_launches};
pub use xdata::XData;

pub(crate) use command::{Recorder, TrackedCommand};
pub(crate) use host_command::{HostCommand, HostRegions};
pub(crate) use layout::{Layout, check_permutation};
