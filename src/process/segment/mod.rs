//! Segmentation by flooding: [`Watershed`] (scikit-image's `segmentation.watershed`: markers, mask, connectivity,
//! compactness, watershed line; markers from the local minima when none are given) and [`WatershedIft`]
//! (scipy.ndimage's `watershed_ift`). Both are exactly sequential — the order the queue hands elements out decides
//! every tie — so each runs on the host in Rust, in the mapped device buffers, as one host command in the queue's
//! order: `flood.rs` (scikit-image's heap order, local minima, labelling) and `ift.rs` (scipy's bucket lists) on the
//! padded grids and offsets of `grid.rs`.

mod flood;
mod grid;
mod ift;
mod watershed;
mod watershed_ift;

pub use watershed::{Connectivity, Watershed, WatershedParams, WatershedStrategy};
pub use watershed_ift::{IftParams, IftStrategy, WatershedIft};
