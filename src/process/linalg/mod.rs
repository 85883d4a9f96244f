//! Linear algebra on batches of matrices: [`MatMul`] (`C = α·op(A)·op(B) + β·C`) with its kernels' tiles
//! ([`GemmStrategy`], [`GemmTiles`], [`GemmPrecision`] for TF32 tensor cores) and the per-device table they come from ([`GemmTable`], `gemm_tiles.toml`),
//! and [`MatrixPower`] (binary exponentiation on `MatMul`). Kernels: `kernels/linalg.cl`.

mod conv_gemm;
mod gemm_choice;
mod gemm_launch;
mod gemm_precision;
mod gemm_strategy;
mod gemm_table;
mod matmul;
mod matrix_power;
mod real_embedding;
mod wgmma;

pub(crate) use conv_gemm::{ConvGemm, ConvGeometry};
pub use gemm_precision::GemmPrecision;
pub use gemm_strategy::{GemmStrategy, GemmTiles};
pub use gemm_table::{GEMM_TABLE_ENV, GemmTable, GemmTableEntry};
pub use matmul::{MatMul, MatMulParams, MatOp};
pub use matrix_power::{MatrixPower, PowerStrategy};
