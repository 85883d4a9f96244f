//! Iterative solvers for linear operators that live on the device ([`ConjugateGradient`] for `(M + λI)x = b`,
//! [`Fista`] for `½|Ax − y|² + g(x)` with a [`Proximal`] map; [`largest_eigenvalue`] of `AᴴA` for its step), reusable with any operator a researcher writes
//! ([`LinearOperator`]): MRI's SENSE operator (`CgSense`, `L1WaveletSense`) is one. Kernels:
//! `kernels/solve.cl`.

mod admm;
mod cg;
mod fista;
mod power;

pub use admm::{TvAdmm, TvParams};
pub use cg::{CgParams, ConjugateGradient, LinearOperator};
pub use fista::{Fista, FistaParams, Proximal};
pub use power::largest_eigenvalue;
