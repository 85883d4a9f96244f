//! [`largest_eigenvalue`]: the power method on a Hermitian positive semi-definite [`LinearOperator`] (`AᴴA`), as
//! BART's `estimate_maxeigenval` runs it to scale a step size (`pics -e`).

use super::LinearOperator;
use crate::app::ClApp;
use crate::data::XData;
use crate::element::ComplexElement;
use crate::error::{Error, Result};
use num_complex::Complex64;

/// The largest eigenvalue of `normal` (Hermitian, positive semi-definite, on arrays of `shape`) by `iterations`
/// steps of the power method from a fixed pseudo-random start: `u ← N u / |N u|`, the estimate `|N u|`. BART's
/// `pics -e` runs 30 steps from a Gaussian start; the estimate approaches the eigenvalue from below, within the
/// ratio of the two largest eigenvalues to the power of the steps. Each step reads the array back to the host
/// once (this runs before an iteration, not inside one).
///
/// ```
/// use cliper::{LinearOperator, XData, largest_eigenvalue};
/// use num_complex::Complex64 as C;
/// // diag(1, 2, 5, 3): the power method finds 5.
/// struct Diagonal(XData<C>);
/// impl LinearOperator<C> for Diagonal {
///     fn apply(&mut self, x: &XData<C>, out: &XData<C>) -> cliper::Result<()> {
///         let d = self.0.to_vec()?;
///         let y: Vec<C> = x.to_vec()?.iter().zip(&d).map(|(a, b)| a * b).collect();
///         out.copy_from(&XData::from_slice(x.app(), x.shape(), &y)?)
///     }
/// }
/// let app = cliper::ClApp::new()?;
/// let d = [1.0, 2.0, 5.0, 3.0].map(|v| C::new(v, 0.0));
/// let mut op = Diagonal(XData::from_slice(&app, &[4], &d)?);
/// let lambda = largest_eigenvalue(&mut op, &app, &[4], 60)?;
/// assert!((lambda - 5.0).abs() < 1e-6, "{lambda}");
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn largest_eigenvalue<T: ComplexElement>(
    normal: &mut dyn LinearOperator<T>,
    app: &ClApp,
    shape: &[usize],
    iterations: usize,
) -> Result<f64> {
    let n: usize = shape.iter().product();
    if n == 0 || iterations == 0 {
        return Err(Error::invalid(
            "largest_eigenvalue",
            format!("shape {shape:?} and {iterations} iterations: both must be non-empty"),
        ));
    }
    let mut u = start_vector(n);
    let mut norm = norm2(&u);
    let x = XData::<T>::uninit(app, "largest_eigenvalue", shape)?;
    let out = XData::<T>::uninit(app, "largest_eigenvalue", shape)?;
    for _ in 0..iterations {
        let scaled: Vec<T> = u.iter().map(|v| T::from_c64(v / norm)).collect();
        x.write(&scaled)?;
        normal.apply(&x, &out)?;
        u = out.to_vec()?.iter().map(|v| v.to_c64()).collect();
        norm = norm2(&u);
        if !norm.is_finite() {
            return Err(Error::invalid("largest_eigenvalue", format!("|N u| = {norm}: the operator is not finite")));
        }
        if norm == 0.0 {
            return Ok(0.0);
        }
    }
    Ok(norm)
}

/// A start with every component non-zero (a fixed linear congruential sequence, centred): it has a part along any
/// eigenvector a run could meet.
fn start_vector(n: usize) -> Vec<Complex64> {
    let mut state = 0x853c_49e6_748f_ea9bu64;
    let mut next = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
    };
    (0..n).map(|_| Complex64::new(next(), next())).collect()
}

fn norm2(v: &[Complex64]) -> f64 {
    v.iter().map(|c| c.norm_sqr()).sum::<f64>().sqrt()
}
