//! The float64 host side of the FFT planner: the radices the pass kernels implement and the factorisation of
//! a length into them, a float64 reference DFT, roots of unity and Bluestein's tables, all computed on the
//! host before any upload.

use num_complex::Complex64;
use std::f64::consts::PI;

/// The radices the pass kernels implement, in the order the planner tries them.
pub(super) const RADICES: [usize; 5] = [4, 2, 3, 5, 7];

/// The Stockham radices for `n` (empty for n = 1), or `None` when n has a prime factor above 7.
pub(super) fn factorize(mut n: usize) -> Option<Vec<usize>> {
    let mut radices = Vec::new();
    // Radix 4 where possible (the cheapest butterfly per element), one 8 or 2 for the rest of a power of two.
    while n.is_multiple_of(4) {
        radices.push(4);
        n /= 4;
    }
    if n.is_multiple_of(2) {
        radices.push(2);
        n /= 2;
    }
    for p in [3, 5, 7] {
        while n.is_multiple_of(p) {
            radices.push(p);
            n /= p;
        }
    }
    (n == 1).then_some(radices)
}

/// The smallest length ≥ `n` with no prime factor above 7.
pub(crate) fn smooth_length(n: usize) -> usize {
    (n..).find(|&m| factorize(m).is_some()).unwrap_or(n)
}

/// A float64 DFT on the host for Bluestein's tables: recursive mixed radix over `factorize`'s radices.
fn host_fft(x: &[Complex64], sign: f64) -> Vec<Complex64> {
    let n = x.len();
    if n <= 1 {
        return x.to_vec();
    }
    let p = factorize(n).and_then(|f| f.into_iter().min()).unwrap_or(n);
    // p interleaved sub-sequences (x[j·p + r] for j < m = n/p), transformed, then combined with twiddles:
    // X[k] = Σ_r sub_r[k mod m] · exp(sign·2πi·rk/n), summed in order of r.
    let subs = (0..p).map(|r| host_fft(&x.iter().skip(r).step_by(p).copied().collect::<Vec<_>>(), sign));
    let mut out = vec![Complex64::new(0.0, 0.0); n];
    for (r, sub) in subs.enumerate() {
        for (k, (o, &s)) in out.iter_mut().zip(sub.iter().cycle()).enumerate() {
            *o += s * Complex64::from_polar(1.0, sign * 2.0 * PI * (r * k) as f64 / n as f64);
        }
    }
    out
}

/// `exp(sign·2πi·k/n)` for k < n, from an exact k/n; over the host's threads (2^24 roots took 0.57 s of a
/// 1-D FFT's `init` on one core: the only part of a second process's `init` the program cache does not remove).
pub(super) fn roots(n: usize, sign: f64) -> Vec<Complex64> {
    use rayon::prelude::*;
    (0..n).into_par_iter().map(|k| unit_root(k, n, sign)).collect()
}

/// `exp(sign·2πi·k/n)`, from an exact k mod n.
fn unit_root(k: usize, n: usize, sign: f64) -> Complex64 {
    Complex64::from_polar(1.0, sign * 2.0 * PI * (k % n) as f64 / n as f64)
}

/// A four-step's twiddles `exp(sign·2πi·x/n)` for x < n as two short tables in one: `block` values
/// `exp(sign·2πi·lo/n)` (lo < block) followed by ⌈n/block⌉ values `exp(sign·2πi·hi·block/n)`, so that
/// ω^x = low[x mod block] · high[x / block]. 2^24 roots in one table are 128 MiB that a kernel reads at scattered
/// places (the 2²⁴ transform's first part ran at 0.34 ms against 0.125 without them, on the H200); these two
/// take 32 KiB plus 32 KiB in float32 and stay in the caches.
pub(super) fn split_twiddles(n: usize, block: usize, sign: f64) -> Vec<Complex64> {
    let low = (0..block).map(|lo| unit_root(lo, n, sign));
    low.chain((0..n.div_ceil(block)).map(|hi| unit_root(hi * block, n, sign))).collect()
}

/// Bluestein's tables for length `n` in the direction of `sign`: the chirp `w_k = exp(sign·πi·k²/n)` (k² mod
/// 2n taken exactly), the transform of the conjugate chirp zero-padded to `m` (already × 1/m), and `m`, the
/// smooth length ≥ 2n − 1.
pub(super) fn bluestein_tables(n: usize, sign: f64) -> (Vec<Complex64>, Vec<Complex64>, usize) {
    use rayon::prelude::*;
    let m = smooth_length(2 * n - 1);
    let chirp: Vec<Complex64> = (0..n)
        .into_par_iter()
        .map(|k| {
            let k2 = ((k as u128 * k as u128) % (2 * n as u128)) as f64;
            Complex64::from_polar(1.0, sign * PI * k2 / n as f64)
        })
        .collect();
    // b[k] = b[m − k] = conj(w_k) for k < n (m ≥ 2n − 1 keeps the two ends apart), zeros between.
    let mut b = vec![Complex64::new(0.0, 0.0); m];
    for (slot, w) in b.iter_mut().zip(&chirp) {
        *slot = w.conj();
    }
    for (slot, w) in b.iter_mut().rev().zip(chirp.iter().skip(1)) {
        *slot = w.conj();
    }
    let hat: Vec<Complex64> = host_fft(&b, -1.0).into_iter().map(|v| v / m as f64).collect();
    (chirp, hat, m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factorizations_cover_smooth_lengths_only() {
        assert_eq!(factorize(1), Some(vec![]));
        assert_eq!(factorize(1024), Some(vec![4, 4, 4, 4, 4]));
        assert_eq!(factorize(2048), Some(vec![4, 4, 4, 4, 4, 2]));
        assert_eq!(factorize(1000), Some(vec![4, 2, 5, 5, 5]));
        assert_eq!(factorize(243), Some(vec![3, 3, 3, 3, 3]));
        assert_eq!(factorize(97), None);
        assert_eq!(smooth_length(2 * 97 - 1), 196);
    }

    #[test]
    fn the_host_fft_matches_the_definition() {
        for n in [1usize, 2, 3, 6, 12, 35, 64] {
            let x: Vec<Complex64> = (0..n).map(|k| Complex64::new((k * k % 7) as f64, k as f64 * 0.5 - 1.0)).collect();
            let got = host_fft(&x, -1.0);
            for (k, g) in got.iter().enumerate() {
                let want: Complex64 = (0..n)
                    .map(|j| x[j] * Complex64::from_polar(1.0, -2.0 * PI * ((j * k) % n) as f64 / n as f64))
                    .sum();
                assert!((g - want).norm() < 1e-9 * n as f64, "n={n} k={k}: {g} vs {want}");
            }
        }
    }
}
