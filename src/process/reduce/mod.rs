//! Reductions: [`NormN`] (p-norms) and [`Dot`] (dot products), of whole arrays or along one axis, both planned by
//! the reduction planner (`reduce_plan.rs`: tree reductions over work-groups with a partials pass, or one
//! work-item per output; on CPU devices float64 loops on the host, `host_reduce.rs`). Kernels: `kernels/reduce.cl`.
//! numpy's reductions of real data over any axes (sum … argmax) are [`Statistic`] (`kernels/reduce_stat.cl`).

mod dot;
mod host_reduce;
mod norm;
mod reduce_plan;
mod reduction;
mod statistic;

pub use dot::{Dot, DotKind, DotParams};
pub use norm::{NormN, NormOrder, NormParams};
pub use reduce_plan::{ReduceKernel, ReduceStrategy};
pub use statistic::{StatKind, StatParams, StatStrategy, Statistic};
