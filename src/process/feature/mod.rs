//! Features (the feature family): [`PeakLocalMax`], scikit-image's `peak_local_max` — a maximum filter
//! ([`RankFilter`](crate::RankFilter)) and a candidates' kernel on the device, then skimage's sequential selection
//! (sort, spacing) on the host in a host command — and [`PeakCoordinates`], its result as skimage's coordinate list.

mod peaks;
mod select;

pub use peaks::{
    CoordinatesStrategy, ExcludeBorder, PeakCoordinates, PeakLocalMax, PeakMark, PeakParams, PeakStrategy,
};
