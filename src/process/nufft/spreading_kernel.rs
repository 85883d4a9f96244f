//! The spreading kernel of the NUFFT: the "exponential of semicircle" `φ(z) = exp(β(√(1 − z²) − 1))` on
//! `|z| ≤ 1`, `z` the distance in fine-grid cells over half the width (Barnett, Magland and af Klinteberg, SIAM J.
//! Sci. Comput. 2019 — FINUFFT's kernel), its width and shape chosen from the tolerance and the upsampling, and its
//! Fourier transform, by which the result is divided (the deconvolution).

use crate::error::{Error, Result};

/// The widest kernel, in fine-grid cells: enough for 1e-14 at upsampling 2.
pub const MAX_WIDTH: usize = 16;

/// One kernel: `width` taps per axis, shape `beta`, on a fine grid `upsampling` times the image.
///
/// ```
/// let k = cliper::SpreadingKernel::for_tolerance(1e-9, 2.0)?;
/// // Its transform at frequency 0 is its integral: positive, below the width.
/// let f0 = k.fourier(0.0, 64, &k.quadrature());
/// assert!(f0 > 0.0 && f0 < k.width as f64);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpreadingKernel {
    /// Taps per axis (fine-grid cells the kernel covers).
    pub width: usize,
    /// The shape parameter β.
    pub beta: f64,
    /// The fine grid's size over the image's, per axis.
    pub upsampling: f64,
}

impl SpreadingKernel {
    /// The kernel for relative tolerance `tolerance` at `upsampling`: the width from the error's decay,
    /// `⌈−log₁₀(ε/10)⌉` at upsampling 2 and `⌈−ln ε / (π √(1 − 1/σ))⌉` otherwise, and β proportional to it
    /// (the rules of the ES kernel's paper, §4, which FINUFFT uses).
    ///
    /// ```
    /// use cliper::SpreadingKernel;
    /// let k = SpreadingKernel::for_tolerance(1e-6, 2.0)?;
    /// assert_eq!(k.width, 7);
    /// assert!((k.beta - 2.30 * 7.0).abs() < 1e-12);
    /// assert_eq!(SpreadingKernel::for_tolerance(1e-6, 1.25)?.width, 10);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn for_tolerance(tolerance: f64, upsampling: f64) -> Result<SpreadingKernel> {
        if !(tolerance.is_finite() && tolerance > 0.0 && tolerance < 1.0) {
            return Err(Error::invalid("Nufft", format!("the tolerance must be in (0, 1); got {tolerance}")));
        }
        if !(upsampling.is_finite() && upsampling > 1.0 && upsampling <= 4.0) {
            return Err(Error::invalid("Nufft", format!("the upsampling must be in (1, 4]; got {upsampling}")));
        }
        let at_two = (upsampling - 2.0).abs() < 1e-12;
        let width = if at_two {
            (-(tolerance / 10.0).log10()).ceil()
        } else {
            (-tolerance.ln() / (std::f64::consts::PI * (1.0 - 1.0 / upsampling).sqrt())).ceil()
        };
        if width > MAX_WIDTH as f64 {
            return Err(Error::invalid(
                "Nufft",
                format!("tolerance {tolerance:e} needs a kernel wider than {MAX_WIDTH} at upsampling {upsampling}"),
            ));
        }
        let width = width.max(2.0) as usize;
        let beta = if at_two {
            let per_tap = match width {
                2 => 2.20,
                3 => 2.26,
                4 => 2.38,
                _ => 2.30,
            };
            per_tap * width as f64
        } else {
            0.97 * std::f64::consts::PI * (1.0 - 0.5 / upsampling) * width as f64
        };
        Ok(SpreadingKernel { width, beta, upsampling })
    }

    /// The kernel at `x` fine-grid cells from its centre (0 beyond half the width).
    ///
    /// ```
    /// let k = cliper::SpreadingKernel::for_tolerance(1e-6, 2.0)?;
    /// assert_eq!(k.value(0.0), 1.0);
    /// assert_eq!(k.value(3.6), 0.0);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn value(&self, x: f64) -> f64 {
        let z = 2.0 * x / self.width as f64;
        if z.abs() > 1.0 { 0.0 } else { (self.beta * ((1.0 - z * z).sqrt() - 1.0)).exp() }
    }

    /// The kernel's Fourier transform at frequency `k / n` cycles per cell, `∫ φ(x) e^{2πi k x / n} dx` (real: φ
    /// is even), by Gauss–Legendre quadrature on `[0, w/2]` with enough nodes for double precision (φ is smooth
    /// inside, and `k/n ≤ 1/2` keeps the cosine to a few periods over the width).
    pub fn fourier(&self, k: f64, n: usize, rule: &GaussLegendre) -> f64 {
        let half = self.width as f64 / 2.0;
        let omega = 2.0 * std::f64::consts::PI * k / n as f64;
        let sum: f64 = rule
            .nodes
            .iter()
            .zip(&rule.weights)
            .map(|(&t, &wt)| {
                let x = half * (t + 1.0) / 2.0;
                wt * self.value(x) * (omega * x).cos()
            })
            .sum();
        // ∫_{−w/2}^{w/2} = 2 ∫_0^{w/2}, and the rule's [−1, 1] maps onto [0, w/2] with Jacobian w/4.
        2.0 * sum * half / 2.0
    }

    /// Chebyshev series of the kernel's taps, for evaluation without `exp` and `sqrt`: a point's taps are
    /// `φ(u + t)` for `t < w` with `u ∈ [−w/2, 1 − w/2)`; with `v = 2(u + w/2) − 1 ∈ [−1, 1)`, tap `t` is
    /// `Σ_k c[k][t] T_k(v)`. The degree is the smallest (from `w` up to 28) whose largest error on a fine grid of
    /// `v` is below `accuracy`; `None` when none is (the device then evaluates φ directly).
    ///
    /// ```
    /// let k = cliper::SpreadingKernel::for_tolerance(1e-6, 2.0)?;
    /// let series = k.chebyshev(1e-6).unwrap();
    /// // T_0 = 1 and T_1(v) = v: at v = 0 the sum is c0 − c2 + c4 − …
    /// let at_zero: f64 = series.iter().step_by(2).enumerate().map(|(i, c)| if i % 2 == 0 { c[0] } else { -c[0] }).sum();
    /// assert!((at_zero - k.value(0.5 - 3.5)).abs() < 1e-6);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn chebyshev(&self, accuracy: f64) -> Option<Vec<Vec<f64>>> {
        let w = self.width;
        let tap = |t: usize, v: f64| self.value((v + 1.0) / 2.0 - w as f64 / 2.0 + t as f64);
        (w..=28).find_map(|degree| {
            let n = degree + 1;
            // Interpolation at the n Chebyshev points of the first kind, coefficients by the discrete cosine sums.
            let nodes: Vec<f64> = (0..n).map(|j| (std::f64::consts::PI * (j as f64 + 0.5) / n as f64).cos()).collect();
            let series: Vec<Vec<f64>> = (0..n)
                .map(|k| {
                    (0..w)
                        .map(|t| {
                            let sum: f64 = nodes
                                .iter()
                                .enumerate()
                                .map(|(j, &v)| {
                                    tap(t, v) * (std::f64::consts::PI * k as f64 * (j as f64 + 0.5) / n as f64).cos()
                                })
                                .sum();
                            sum * if k == 0 { 1.0 } else { 2.0 } / n as f64
                        })
                        .collect()
                })
                .collect();
            let worst = (0..=2000)
                .map(|i| -1.0 + 2.0 * i as f64 / 2000.0)
                .flat_map(|v| (0..w).map(move |t| (v, t)))
                .map(|(v, t)| (clenshaw(&series, t, v) - tap(t, v)).abs())
                .fold(0.0, f64::max);
            (worst <= accuracy).then_some(series)
        })
    }

    /// The quadrature rule [`SpreadingKernel::fourier`] wants for this width.
    pub fn quadrature(&self) -> GaussLegendre {
        GaussLegendre::new(2 * self.width + 24)
    }
}

/// `Σ_k series[k][t] T_k(v)` by Clenshaw's recurrence (as kernels/nufft.cl evaluates it).
fn clenshaw(series: &[Vec<f64>], t: usize, v: f64) -> f64 {
    let (mut b1, mut b2) = (0.0, 0.0);
    for c in series.iter().skip(1).rev() {
        let b0 = 2.0 * v * b1 - b2 + c.get(t).copied().unwrap_or(0.0);
        b2 = b1;
        b1 = b0;
    }
    v * b1 - b2 + series.first().and_then(|c| c.get(t)).copied().unwrap_or(0.0)
}

/// Gauss–Legendre nodes and weights on `[−1, 1]`.
///
/// ```
/// // Exact for polynomials of degree up to 2n − 1: ∫ x² over [−1, 1] = 2/3 with two nodes.
/// let two = cliper::GaussLegendre::new(2);
/// assert!((two.integrate(|x| x * x) - 2.0 / 3.0).abs() < 1e-15);
/// ```
pub struct GaussLegendre {
    nodes: Vec<f64>,
    weights: Vec<f64>,
}

impl GaussLegendre {
    /// `∫_{−1}^{1} f(x) dx` by the rule.
    pub fn integrate(&self, f: impl Fn(f64) -> f64) -> f64 {
        self.nodes.iter().zip(&self.weights).map(|(&x, &w)| w * f(x)).sum()
    }

    /// The `count`-point rule, by Newton's iteration on the Legendre polynomial from Tricomi's initial guesses.
    pub fn new(count: usize) -> GaussLegendre {
        let n = count.max(1);
        let nf = n as f64;
        let (mut nodes, mut weights) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for i in 1..=n {
            let mut x = (std::f64::consts::PI * (i as f64 - 0.25) / (nf + 0.5)).cos();
            let mut derivative = 1.0;
            for _ in 0..100 {
                let (p, d) = legendre(n, x);
                derivative = d;
                let step = p / d;
                x -= step;
                if step.abs() < 1e-16 {
                    break;
                }
            }
            let (_, d) = legendre(n, x);
            derivative = if d != 0.0 { d } else { derivative };
            nodes.push(x);
            weights.push(2.0 / ((1.0 - x * x) * derivative * derivative));
        }
        GaussLegendre { nodes, weights }
    }
}

/// `P_n(x)` and `P_n'(x)` by the three-term recurrence.
fn legendre(n: usize, x: f64) -> (f64, f64) {
    let (mut previous, mut current) = (1.0, x);
    for k in 2..=n {
        let k = k as f64;
        let next = ((2.0 * k - 1.0) * x * current - (k - 1.0) * previous) / k;
        previous = current;
        current = next;
    }
    if n == 0 {
        return (1.0, 0.0);
    }
    let derivative = n as f64 * (x * current - previous) / (x * x - 1.0);
    (current, derivative)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quadrature_integrates_polynomials_exactly() {
        let rule = GaussLegendre::new(10);
        // ∫_{−1}^{1} x^18 dx = 2/19: degree 2n − 2 is within the 10-point rule's exactness (2n − 1).
        let integral: f64 = rule.nodes.iter().zip(&rule.weights).map(|(x, w)| w * x.powi(18)).sum();
        assert!((integral - 2.0 / 19.0).abs() < 1e-14, "{integral}");
        assert!((rule.weights.iter().sum::<f64>() - 2.0).abs() < 1e-14);
    }

    #[test]
    fn fourier_transform_equals_a_fine_riemann_sum() {
        // The trapezoid rule on a smooth compactly supported function converges fast: 20 000 intervals give
        // ~1e-12 absolute here (φ is continuous but its derivative jumps at ±w/2 by e^−β, ~1e-7).
        for (tolerance, upsampling) in [(1e-6, 2.0), (1e-9, 2.0), (1e-3, 1.25)] {
            let kernel = SpreadingKernel::for_tolerance(tolerance, upsampling).unwrap();
            let rule = kernel.quadrature();
            let half = kernel.width as f64 / 2.0;
            for (k, n) in [(0.0, 64), (13.0, 64), (-31.0, 64), (40.0, 100)] {
                let steps = 20_000;
                let h = 2.0 * half / steps as f64;
                let riemann: f64 = (0..=steps)
                    .map(|i| {
                        let x = -half + i as f64 * h;
                        let end = if i == 0 || i == steps { 0.5 } else { 1.0 };
                        end * kernel.value(x) * (2.0 * std::f64::consts::PI * k * x / n as f64).cos()
                    })
                    .sum::<f64>()
                    * h;
                let quad = kernel.fourier(k, n, &rule);
                // φ has a square-root edge of height e^−β at ±w/2, where both rules converge algebraically: the
                // Gauss–Legendre error there is ~β e^−β / nodes³ (2e-8 absolute at β 9.1), far below any tolerance
                // that kernel serves (1e-3); elsewhere they agree to 1e-9.
                let allowed = 1e-9 * riemann.abs() + 5e-4 * (-kernel.beta).exp();
                assert!((quad - riemann).abs() < allowed, "{tolerance} {k}/{n}: {quad} vs {riemann}");
            }
        }
    }

    #[test]
    fn widths_follow_the_tolerance() {
        assert_eq!(SpreadingKernel::for_tolerance(1e-2, 2.0).unwrap().width, 3);
        assert_eq!(SpreadingKernel::for_tolerance(1e-9, 2.0).unwrap().width, 10);
        assert_eq!(SpreadingKernel::for_tolerance(1e-12, 2.0).unwrap().width, 13);
        assert!(SpreadingKernel::for_tolerance(0.0, 2.0).is_err());
        assert!(SpreadingKernel::for_tolerance(1e-6, 1.0).is_err());
    }
}
