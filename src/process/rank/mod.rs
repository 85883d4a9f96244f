//! Rank filters — scipy.ndimage's median_filter, minimum_filter, maximum_filter, percentile_filter and
//! rank_filter as one process, [`RankFilter`] ([`RankParams`]: [`RankKind`], size or [`Footprint`], border,
//! origin) — and grey morphology on them ([`GreyMorphology`]: grey_erosion, grey_dilation, grey_opening,
//! grey_closing) — and scipy's generic_filter with numpy's reductions ([`GenericFilter`], [`GenericParams`]:
//! [`WindowFunction`] over the same windows). `rank_filter.rs` chooses per window: separable box min/max passes (each followed by scipy's
//! deque rerun on the lines that hold a NaN), one loop over the taps in scipy's order for the minimum or maximum
//! of other footprints and of structures, a selection network generated in `network.rs`, or bisection; on CPU devices, medians and other ranks on the host
//! (`host_rank.rs`). Kernels:
//! `kernels/rank.cl` (+ the generated network).

mod generic;
mod grey;
mod host_rank;
mod network;
mod params;
mod rank_filter;

pub use generic::{GenericFilter, GenericParams, GenericStrategy, WindowFunction};
pub use grey::{GreyMorphology, GreyOp, GreyParams, GreyStrategy};
pub use params::{Footprint, RankKind, RankParams};
pub use rank_filter::{RankFilter, RankStrategy};
