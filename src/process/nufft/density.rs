//! [`DensityCompensation`]: Pipe–Menon's iterative density compensation weights of a trajectory, as SigPy's
//! `sigpy.mri.pipe_menon_dcf` computes them (on the host, in float64, once per trajectory).

use super::NufftPoints;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// The settings of [`DensityCompensation::pipe_menon`]; the defaults are SigPy 0.1.27's: 30 iterations of
/// `w ← w / |Gᴴ G w|` from `w = 1`, `G` the Kaiser–Bessel gridding on the image's own grid (no oversampling) with
/// β = 8 and a width of 4 grid points.
///
/// ```
/// let p = cliper::DcfParams::default();
/// assert_eq!((p.iterations, p.width, p.beta), (30, 4.0, 8.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcfParams {
    /// Iterations of the fixed point (no convergence test, as SigPy's).
    pub iterations: usize,
    /// The kernel's full width in grid points: it covers `|i − k| ≤ width / 2` per axis.
    pub width: f64,
    /// The Kaiser–Bessel shape β: `K(u) = I₀(β √(1 − u²))`, `u = (i − k) / (width / 2)`.
    pub beta: f64,
}

impl Default for DcfParams {
    fn default() -> DcfParams {
        DcfParams { iterations: 30, width: 4.0, beta: 8.0 }
    }
}

/// Density compensation weights: one real weight per point that evens out how densely a trajectory samples
/// k-space, so that the adjoint NUFFT of the weighted samples (`gridding`) approximates the image.
/// [`DensityCompensation::pipe_menon`] is Pipe and Menon's fixed point (MRM 41:179, 1999) with SigPy's kernel
/// and settings; its weights are within float32's rounding of `sigpy.mri.pipe_menon_dcf` (tests/fft/nufft.rs).
/// The grid is periodic (SigPy's wraps every kernel point), and the points are in BART's units (cycles per FOV).
///
/// ```
/// use cliper::{DcfParams, DensityCompensation, NufftPoints};
/// // A radial trajectory: 8 spokes of 16 samples through the centre of a 16 × 16 grid.
/// let coords: Vec<f64> = (0..8)
///     .flat_map(|s| {
///         let a = std::f64::consts::PI * s as f64 / 8.0;
///         (0..16).flat_map(move |i| [(i as f64 - 8.0) * a.cos(), (i as f64 - 8.0) * a.sin()])
///     })
///     .collect();
/// let points = NufftPoints::new(&[16, 16], coords)?;
/// let w = DensityCompensation::pipe_menon(&points, DcfParams::default())?;
/// // Samples at the crowded centre weigh less than those at the edge.
/// assert!(w.weights()[8] < w.weights()[1]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DensityCompensation {
    weights: Vec<f64>,
    /// (∫K)^{2d}: SigPy's weights times this are in grid cells.
    cell: f64,
}

/// Partial grids of the spreading pass: a fixed count (not the thread count), so the sums are the same on any
/// machine; each is one grid of the image's size.
const PARTIALS: usize = 8;
/// Partial grids above this many bytes in all are not made: the spreading runs in one pass.
const PARTIAL_BUDGET: usize = 1 << 30;

impl DensityCompensation {
    /// Pipe–Menon weights of `points` on their image grid.
    pub fn pipe_menon(points: &NufftPoints, params: DcfParams) -> Result<DensityCompensation> {
        let op = "DensityCompensation";
        if !(params.width.is_finite() && params.width > 0.0 && params.width <= 32.0 && params.beta.is_finite()) {
            return Err(Error::invalid(
                op,
                format!("width {} must be in (0, 32] grid points and β {} finite", params.width, params.beta),
            ));
        }
        let grid = Grid::new(points, params);
        let mut weights = vec![1.0; points.len()];
        let mut density = vec![0.0; points.len()];
        for _ in 0..params.iterations {
            let spread = grid.spread(&weights);
            grid.interpolate(&spread, &mut density);
            if let Some((i, d)) = density.iter().enumerate().find(|(_, d)| !(d.is_finite() && **d != 0.0)) {
                return Err(Error::invalid(op, format!("point {i}: its density is {d} (no grid point near it)")));
            }
            weights.iter_mut().zip(&density).for_each(|(w, d)| *w /= d.abs());
        }
        let cell = kernel_integral(params).powi(2 * points.shape().len() as i32);
        Ok(DensityCompensation { weights, cell })
    }

    /// The weights, one per point in the points' order, on SigPy's scale (its kernel is not normalised: the
    /// weights of a 64² radial trajectory are ~1e-11).
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// The weights in grid cells of k-space per point: [`DensityCompensation::weights`] times `(∫K)^{2d}`, the
    /// gain of `Gᴴ G` on a uniform density. Points that fill a Cartesian grid get 1 each (to the kernel's aliasing,
    /// 1e-3), so the adjoint NUFFT of samples weighted by these has the intensities of the inverse DFT.
    ///
    /// ```
    /// use cliper::{DcfParams, DensityCompensation, NufftPoints};
    /// let grid: Vec<f64> = (0..12 * 10).flat_map(|i| [(i / 10) as f64 - 6.0, (i % 10) as f64 - 5.0]).collect();
    /// let w = DensityCompensation::pipe_menon(&NufftPoints::new(&[12, 10], grid)?, DcfParams::default())?;
    /// assert!(w.cell_weights().iter().all(|v| (v - 1.0).abs() < 2e-3));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn cell_weights(&self) -> Vec<f64> {
        self.weights.iter().map(|w| w * self.cell).collect()
    }
}

/// The periodic image grid and, per point, its kernel taps along each axis (first grid index and values).
struct Grid<'a> {
    shape: Vec<usize>,
    points: &'a NufftPoints,
    params: DcfParams,
}

impl<'a> Grid<'a> {
    fn new(points: &'a NufftPoints, params: DcfParams) -> Grid<'a> {
        Grid { shape: points.shape().to_vec(), points, params }
    }

    /// The taps of the point at `k` (one coordinate per axis) along each axis: the first grid index (wrapped per
    /// tap later) and the kernel's values.
    fn taps(&self, k: &[f64]) -> Vec<(i64, Vec<f64>)> {
        let half = self.params.width / 2.0;
        k.iter()
            .map(|&k| {
                let (first, last) = ((k - half).ceil() as i64, (k + half).floor() as i64);
                let values = (first..=last).map(|i| kaiser_bessel((i as f64 - k) / half, self.params.beta)).collect();
                (first, values)
            })
            .collect()
    }

    /// Calls `visit(grid index, weight)` for every grid point under the kernel of the point at `k`.
    fn each_tap(&self, k: &[f64], mut visit: impl FnMut(usize, f64)) {
        let taps = self.taps(k);
        let wrap = |i: i64, n: usize| i.rem_euclid(n as i64) as usize;
        match (taps.as_slice(), self.shape.as_slice()) {
            ([(x0, wx)], [nx]) => wx.iter().enumerate().for_each(|(i, w)| visit(wrap(x0 + i as i64, *nx), *w)),
            ([(x0, wx), (y0, wy)], [nx, ny]) => {
                for (i, a) in wx.iter().enumerate() {
                    let row = wrap(x0 + i as i64, *nx) * ny;
                    for (j, b) in wy.iter().enumerate() {
                        visit(row + wrap(y0 + j as i64, *ny), a * b);
                    }
                }
            }
            ([(x0, wx), (y0, wy), (z0, wz)], [nx, ny, nz]) => {
                for (i, a) in wx.iter().enumerate() {
                    let plane = wrap(x0 + i as i64, *nx) * ny;
                    for (j, b) in wy.iter().enumerate() {
                        let row = (plane + wrap(y0 + j as i64, *ny)) * nz;
                        for (l, c) in wz.iter().enumerate() {
                            visit(row + wrap(z0 + l as i64, *nz), a * b * c);
                        }
                    }
                }
            }
            _ => unreachable!("NufftPoints holds 1 to 3 axes"),
        }
    }

    /// `G w`: the weights spread onto the grid, in `PARTIALS` fixed chunks of points summed in order.
    fn spread(&self, w: &[f64]) -> Vec<f64> {
        let size: usize = self.shape.iter().product();
        let d = self.shape.len();
        let partials = if size * 8 * PARTIALS <= PARTIAL_BUDGET { PARTIALS } else { 1 };
        let chunk = w.len().div_ceil(partials).max(1);
        let grids: Vec<Vec<f64>> = w
            .par_chunks(chunk)
            .zip(self.points.coords().par_chunks(chunk * d))
            .map(|(values, coords)| {
                let mut grid = vec![0.0; size];
                for (v, k) in values.iter().zip(coords.chunks_exact(d)) {
                    self.each_tap(k, |g, tap| {
                        if let Some(cell) = grid.get_mut(g) {
                            *cell += tap * v;
                        }
                    });
                }
                grid
            })
            .collect();
        let mut grids = grids.into_iter();
        let mut total = grids.next().unwrap_or_else(|| vec![0.0; size]);
        for g in grids {
            total.iter_mut().zip(&g).for_each(|(t, v)| *t += v);
        }
        total
    }

    /// `Gᴴ g`: the grid interpolated at every point.
    fn interpolate(&self, grid: &[f64], out: &mut [f64]) {
        let d = self.shape.len();
        out.par_iter_mut().zip(self.points.coords().par_chunks_exact(d)).for_each(|(o, k)| {
            let mut sum = 0.0;
            self.each_tap(k, |g, tap| sum += tap * grid.get(g).copied().unwrap_or(0.0));
            *o = sum;
        });
    }
}

/// `∫ K(x) dx` over the kernel's support in grid units, as `h ∫ I₀(β cos θ) cos θ dθ` over (−π/2, π/2) (`x = h sin
/// θ` removes the square root's edge), by Simpson's rule on 512 intervals: the integrand is smooth, the error far
/// below float64's use here.
fn kernel_integral(params: DcfParams) -> f64 {
    let half = params.width / 2.0;
    let n = 512;
    let step = std::f64::consts::PI / n as f64;
    let f = |i: usize| {
        let theta = -std::f64::consts::FRAC_PI_2 + i as f64 * step;
        kaiser_bessel(theta.sin(), params.beta) * theta.cos()
    };
    let inner: f64 = (1..n).map(|i| if i % 2 == 1 { 4.0 * f(i) } else { 2.0 * f(i) }).sum();
    half * step / 3.0 * (f(0) + inner + f(n))
}

/// `I₀(β √(1 − u²))` for |u| ≤ 1, else 0 — with I₀ by Abramowitz and Stegun's polynomials 9.8.1 and 9.8.2 (relative
/// error below 2e-7), the approximation SigPy evaluates, so that the weights agree to float32's rounding.
fn kaiser_bessel(u: f64, beta: f64) -> f64 {
    if u.abs() > 1.0 {
        return 0.0;
    }
    let x = beta * (1.0 - u * u).sqrt();
    if x < 3.75 {
        let t = (x / 3.75).powi(2);
        1.0 + t
            * (3.515_622_9
                + t * (3.089_942_4 + t * (1.206_749_2 + t * (0.265_973_2 + t * (0.036_076_8 + t * 0.004_581_3)))))
    } else {
        let t = 3.75 / x;
        let series = 0.398_942_28
            + t * (0.013_285_92
                + t * (0.002_253_19
                    + t * (-0.001_575_65
                        + t * (0.009_162_81
                            + t * (-0.020_577_06 + t * (0.026_355_37 + t * (-0.016_476_33 + t * 0.003_923_77)))))));
        series * x.exp() / x.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::{DcfParams, kaiser_bessel, kernel_integral};

    /// ∫K for SigPy's kernel (β 8, width 4) against scipy.integrate.quad of scipy.special.i0: 745.2394128947751.
    #[test]
    fn kernel_integral_matches_quadrature() {
        let ours = kernel_integral(DcfParams::default());
        assert!((ours / 745.2394128947751 - 1.0).abs() < 1e-6, "{ours}");
    }

    /// I₀ by the series Σ (x/2)^{2k} / (k!)² in float64, against the polynomial approximation.
    #[test]
    fn kaiser_bessel_is_i0_to_its_approximations_error() {
        for &x in &[0.0, 0.5, 2.0, 3.7, 3.8, 6.0, 8.0] {
            let mut term = 1.0f64;
            let mut i0 = 1.0f64;
            for k in 1..60 {
                term *= (x / 2.0) * (x / 2.0) / (k as f64 * k as f64);
                i0 += term;
            }
            let u = (1.0 - (x / 8.0) * (x / 8.0)).sqrt();
            let ours = kaiser_bessel(u, 8.0);
            assert!((ours / i0 - 1.0).abs() < 2e-7, "x {x}: {ours} against {i0}");
        }
        assert_eq!(kaiser_bessel(1.01, 8.0), 0.0);
    }
}
