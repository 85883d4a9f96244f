//! Iterative solvers for linear operators that live on the device ([`ConjugateGradient`]), reusable with any
//! operator a researcher writes ([`LinearOperator`]): MRI's SENSE operator (`CgSense`) is one. Kernels:
//! `kernels/solve.cl`.

mod cg;

pub use cg::{CgParams, ConjugateGradient, LinearOperator};
