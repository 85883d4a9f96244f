//! Copies between views of one shape: [`Transpose`], [`ConjugateTranspose`], [`Permute`] and [`StridedCopy`],
//! all planned by the copy planner (`copy_plan.rs`: a buffer copy, row copies or a tiled transpose, with tile
//! shapes per device, [`TransposeTiles`]), which also gathers and scatters `XData` views (`views.rs`).
//! Kernels: `kernels/layout.cl`. numpy's basic indexing, [`Slice`], is a gather of its own (`kernels/slice.cl`):
//! its negative steps are signed strides, which views do not have.

mod copy_plan;
mod permute;
mod slice;
mod stack;
mod strided_copy;
mod transpose;
mod views;

pub(crate) use copy_plan::CopyPlan;
pub use copy_plan::{CopyStrategy, TransposeTiles};
pub use permute::Permute;
pub use slice::{Slice, SliceAxis, SliceEntry, SliceSpec};
pub use stack::{Stack, StackStrategy};
pub use strided_copy::{CopyParams, StridedCopy};
pub use transpose::{ConjugateTranspose, Transpose};
