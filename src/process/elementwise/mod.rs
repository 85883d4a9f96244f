//! Element-wise operations: [`Elementwise`] (numpy-style maths from an [`Expr`]: one generated kernel per
//! expression, back-to-back stages of a Pipeline fused into one, or into the convolution before them; `expr.rs`,
//! `expr_kernel.rs`, `elementwise.rs`, `epilogue.rs`), and the fixed kernels [`ComplexElementProd`],
//! [`ApplyMask`], [`Complex2Real`] / [`ComplexAbs`], [`ScalarMultiply`] and [`Fill`], all planned by the element-wise planner (`plan.rs`: one generated kernel per
//! operation and element types over merged batch axes, numpy broadcasting of the second operand). Kernels:
//! `kernels/elementwise.cl`.

mod apply_mask;
mod complex_product;
mod complex_to_real;
#[allow(clippy::module_inception)]
mod elementwise;
mod epilogue;
mod expr;
mod expr_kernel;
mod fill;
mod plan;
mod scalar_multiply;

pub use apply_mask::ApplyMask;
pub use complex_product::{ComplexElementProd, ProductKind};
pub use complex_to_real::{Complex2Real, ComplexAbs, ComplexPart};
pub use elementwise::{Elementwise, ExprStrategy};
pub use epilogue::EpilogueStrategy;
pub(crate) use epilogue::{Epilogue, EpilogueCode, PlannedEpilogue};
pub use expr::{BinaryOp, Expr, UnaryOp};
pub use fill::Fill;
pub use plan::ElementwiseStrategy;
pub(crate) use plan::{EwOp, EwPlan};
pub use scalar_multiply::ScalarMultiply;
