//! MatrixPower against repeated float64 products, on every element type.
//!
//! Tolerance, per element: |Δ| ≤ c·max(n − 1, 1)·(s + 2)·ε·(|A|ⁿ)ᵢⱼ, with s the matrix size, ε the unit
//! roundoff of the real type, c = 1 for real and 4 for complex types. A product X·Y of approximations with
//! errors e_X·|A|ᵏ and e_Y·|A|ˡ has error at most (e_X + e_Y + (s + 2)·ε)·|A|ᵏ⁺ˡ (see tests/matmul.rs for the
//! per-product term), so any product tree for Aⁿ — binary exponentiation included, where each squaring doubles
//! the relative error it inherits — stays within (n − 1)·(s + 2)·ε·|A|ⁿ (Higham §3.5). The matrices are scaled
//! so |A| has spectral radius about 1, which keeps A¹⁰⁰ representable and the bound meaningful.

mod common;
use cliper::prelude::*;
use common::*;
use ndarray::{Array2, ArrayD, Axis, Ix2, IxDyn};
use num_complex::Complex64;

const EXPONENTS: &[u64] = &[0, 1, 2, 3, 7, 8, 100];

/// A random batch of s × s matrices with entries in [-2/s, 2/s) (row sums of |A| about 1), on the device and
/// as float64 on the host.
fn scaled<T: Element>(rng: &mut Rng, shape: &[usize]) -> (XData<T>, ArrayD<Complex64>) {
    let s = shape[shape.len() - 1] as f64;
    let host: Vec<T> =
        rng.vec::<T>(shape.iter().product()).into_iter().map(|v| T::from_c64(v.to_c64() * (2.0 / s))).collect();
    let x = XData::from_slice(app(), shape, &host).unwrap();
    (x, ArrayD::from_shape_vec(IxDyn(shape), host.iter().map(|v| v.to_c64()).collect()).unwrap())
}

fn powers_of<T: Element>() {
    let mut rng = Rng::new(31);
    for shape in [&[1usize, 1][..], &[33, 33], &[65, 65], &[2, 17, 17]] {
        let (a, host) = scaled::<T>(&mut rng, shape);
        let s = shape[shape.len() - 1];
        let c = if T::IS_COMPLEX { 4.0 } else { 1.0 };
        for &n in EXPONENTS {
            let out = poisoned::<T>(shape);
            let mut power = MatrixPower::new(&a, &out, n);
            power.init().unwrap();
            power.launch().unwrap();
            match power.strategy().unwrap() {
                PowerStrategy::Identity => assert_eq!(n, 0),
                PowerStrategy::Copy(_) => assert_eq!(n, 1),
                PowerStrategy::Products { products, .. } => {
                    assert_eq!(products, (63 - n.leading_zeros() + n.count_ones() - 1) as usize)
                }
            }
            let got = fetch(&out);
            for (b, (g, h)) in got.matrices().into_iter().zip(host.matrices()).enumerate() {
                let (want, bound) = power_ref(&h, n);
                for ((i, j), w) in want.indexed_iter() {
                    let err = (g[[i, j]] - w).norm();
                    let tol = c * (n.max(2) - 1) as f64 * (s + 2) as f64 * eps::<T>() * bound[[i, j]];
                    assert!(
                        err <= tol,
                        "{} {shape:?} n={n} matrix {b} [{i},{j}]: got {}, expected {w} (|Δ| {err:e} > {tol:e})",
                        T::NAME,
                        g[[i, j]]
                    );
                }
            }
        }
    }
}

/// Splits `[batch…, s, s]` into its matrices.
trait Batches {
    fn matrices(&self) -> Vec<Array2<Complex64>>;
}

impl Batches for ArrayD<Complex64> {
    fn matrices(&self) -> Vec<Array2<Complex64>> {
        let nd = self.ndim();
        let s = self.shape()[nd - 1];
        let flat = self.to_shape((self.len() / (s * s), s, s)).unwrap().to_owned();
        flat.axis_iter(Axis(0)).map(|m| m.to_owned().into_dimensionality::<Ix2>().unwrap()).collect()
    }
}

/// Aⁿ by n − 1 float64 products (the identity for n = 0), and |A|ⁿ for the error bound.
fn power_ref(a: &Array2<Complex64>, n: u64) -> (Array2<Complex64>, Array2<f64>) {
    let s = a.nrows();
    let abs = a.mapv(|v| v.norm());
    let mut p = Array2::from_diag_elem(s, Complex64::new(1.0, 0.0));
    let mut m = Array2::from_diag_elem(s, 1.0);
    for _ in 0..n {
        p = p.dot(a);
        m = m.dot(&abs);
    }
    (p, m)
}

#[test]
fn powers_match_repeated_products_for_all_types() {
    for_each_element!(powers_of);
}

#[test]
fn launches_exactly_the_binary_exponentiation_products() {
    let mut rng = Rng::new(32);
    let (a, _) = scaled::<f32>(&mut rng, &[65, 65]);
    for n in [2u64, 3, 7, 8, 100, 255, 256] {
        let out = XData::<f32>::zeros(app(), &[65, 65]).unwrap();
        let mut chain = Pipeline::new(app()).then(MatrixPower::new(&a, &out, n));
        let report = chain.profile().unwrap();
        // A GEMM kernel on GPUs, the host's GEMM (`host_gemm`) on CPU devices.
        let products = report.launches.iter().filter(|l| l.kernel.contains("gemm")).count();
        let expected = (63 - n.leading_zeros()) + n.count_ones() - 1;
        assert_eq!(products, expected as usize, "n = {n}: {report}");
        assert_eq!(report.launches.len(), products, "n = {n}: only products, no copies: {report}");
    }
}

#[test]
fn non_square_and_mismatched_outputs_are_named() {
    let a = XData::<f32>::zeros(app(), &[3, 4]).unwrap();
    let err = MatrixPower::apply(&a, 2).unwrap_err();
    assert!(matches!(err, cliper::Error::Shape { .. }), "{err:?}");
    assert!(err.to_string().contains("[3, 4]") && err.to_string().contains("[3, 3]"), "{err}");
    let v = XData::<f32>::zeros(app(), &[4]).unwrap();
    assert!(MatrixPower::apply(&v, 2).unwrap_err().to_string().contains("[4]"));
    let sq = XData::<f32>::zeros(app(), &[4, 4]).unwrap();
    let wrong = XData::<f32>::zeros(app(), &[2, 4, 4]).unwrap();
    let err = MatrixPower::new(&sq, &wrong, 3).init().unwrap_err().to_string();
    assert!(err.contains("[4, 4]") && err.contains("[2, 4, 4]"), "{err}");
    let err = MatrixPower::new(&sq, &sq, 3).init().unwrap_err().to_string();
    assert!(err.contains("overlaps"), "{err}");
}
