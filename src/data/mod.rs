//! Arrays on the device: element types, [`XData`] (N-d real or complex arrays with strides) and [`KData`]
//! (k-space data with coils, frames, sensitivity maps and a sampling mask).

mod element;
mod kdata;
mod layout;
mod storage;
mod xdata;

pub use element::{ComplexElement, Element, RealElement};
pub use kdata::KData;
pub use xdata::XData;

pub(crate) use layout::{Layout, check_permutation};
pub(crate) use storage::Storage;
