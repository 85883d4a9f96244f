//! BART 0.8's own gridding (src/noncart/grid.c and nufft.c), for [`super::NufftKernel::Bart`]: a Kaiser–Bessel
//! kernel of half-width 3 on a grid of exactly twice the image, read from BART's 101-entry float32 table by
//! linear interpolation, the analytic roll-off correction, and BART's non-periodic grid (taps outside it are
//! dropped, not wrapped). It reproduces `bart nufft` to float32's rounding rather than approximating the exact
//! sums: BART's table errs by about 1e-2 of them.

use std::f64::consts::PI;

/// The kernel's half-width in grid cells (`data->width = 3.`).
pub(super) const HALF_WIDTH: f64 = 3.0;

/// Taps per axis that cover `|g − pos| ≤ 3` for any position: 7 cells, the outer ones 0 where BART has none.
pub(super) const TAPS: usize = 7;

/// BART's table has `INTERVALS + 1` entries (`kb_size = 100`) and interpolates over `INTERVALS − 1` of them.
const INTERVALS: usize = 100;

/// BART's shape β = π √(((2·width/os)(os − ½))² − 0.8) at os 2, width 3 (Beatty et al.), kept in float32 as
/// BART keeps it (`grid_conf_s.beta`): 13.8551.
pub(super) fn beta() -> f64 {
    let exact = PI * (((HALF_WIDTH * 2.0 / 2.0) * (2.0 - 0.5)).powi(2) - 0.8).sqrt();
    f64::from(exact as f32)
}

/// I₀ by its series Σ ((x/2)^k / k!)², to float64's rounding for the arguments used here (|x| ≤ 14).
fn bessel_i0(x: f64) -> f64 {
    let (mut term, mut sum) = (1.0f64, 1.0f64);
    for k in 1..200 {
        term *= (x / 2.0) * (x / 2.0) / (k as f64 * k as f64);
        sum += term;
        if term < sum * 1e-18 {
            break;
        }
    }
    sum
}

/// BART's `kb(β, x)`: `I₀(β √(1 − (2x)²)) / I₀(β)` for `|x| < ½`, else 0.
fn kaiser_bessel(x: f64, beta: f64) -> f64 {
    if x.abs() >= 0.5 { 0.0 } else { bessel_i0(beta * (1.0 - (2.0 * x).powi(2)).sqrt()) / bessel_i0(beta) }
}

/// BART's `kb_precompute`: entry `i` is `kb(β, i / 99 / 2)`, stored in float32 (the last two are 0).
pub(super) fn table() -> Vec<f32> {
    let beta = beta();
    (0..=INTERVALS).map(|i| kaiser_bessel(i as f64 / (INTERVALS - 1) as f64 / 2.0, beta) as f32).collect()
}

/// The table as OpenCL source: `BART_TABLE`, `BART_INTERVALS` and `bart_table` for `nufft_taps`.
pub(super) fn table_source(double: bool) -> String {
    let suffix = if double { "" } else { "f" };
    let entries: Vec<String> = table().iter().map(|&v| format!("{:e}{suffix}", f64::from(v))).collect();
    format!(
        "#define BART_TABLE 1\n#define BART_INTERVALS {INTERVALS}\n#define BART_HALF_WIDTH {HALF_WIDTH:.1}\n\
         constant R bart_table[{}] = {{{}}};\n",
        INTERVALS + 1,
        entries.join(", ")
    )
}

/// BART's roll-off correction of image index `i` on an axis of `n` (`rolloff_correction` with os 1, the
/// decomposed grid's): `ftkb(β, 3 (i − n/2)/n) / ftkb(β, 0)`, `ftkb(β, x) = a / sinh a`, `a = √(β² − (πx)²)`; 1 on
/// an axis of one.
pub(super) fn rolloff(i: usize, n: usize) -> f64 {
    if n == 1 {
        return 1.0;
    }
    let beta = beta();
    let ftkb = |x: f64| {
        let a = (beta * beta - (PI * x).powi(2)).sqrt();
        if a == 0.0 { 1.0 } else { a / a.sinh() }
    };
    let position = (i as f64 - n as f64 / 2.0) / n as f64;
    ftkb(position * HALF_WIDTH) / ftkb(0.0)
}

/// The taps BART keeps of a point at `k` cycles per field of view on an axis of `n` image cells, whose first tap
/// (on our periodic grid of `2n`, `k` at cell `2k mod 2n`) is `first`: BART puts `k` at `pos = 2k + n` on a grid
/// `[0, 2n)` that does not wrap, so tap `t` (BART's cell `g = first + t + (pos − x)`) is kept when `0 ≤ g < 2n`.
/// Returns the first and last kept tap (`last < first` when none is); every tap when `periodic`.
pub(super) fn kept_taps(k: f64, x: f64, first: f64, n: usize, periodic: bool) -> (f64, f64) {
    let last_tap = (TAPS - 1) as f64;
    if periodic {
        return (0.0, last_tap);
    }
    let cells = 2.0 * n as f64;
    let g0 = (first + (2.0 * k + n as f64) - x).round();
    ((-g0).max(0.0), (cells - 1.0 - g0).min(last_tap))
}

#[cfg(test)]
mod tests {
    use super::{beta, kept_taps, rolloff, table};

    /// β and the table against BART 0.8 (printed by `calc_beta(2, 3)` and scipy.special.i0 for `kb_precompute`).
    #[test]
    fn table_is_barts() {
        assert!((beta() - 13.855_1).abs() < 1e-4, "{}", beta());
        let t = table();
        assert_eq!(t.len(), 101);
        assert_eq!(t[0], 1.0);
        assert_eq!((t[99], t[100]), (0.0, 0.0));
        // Entry 50: kb(β, 50/99/2) in float32 by scipy.special.i0 with β = float32(13.8551).
        assert_eq!(t[50], 0.161_746_1);
        assert!(t.windows(2).all(|w| w[1] <= w[0]));
    }

    /// The roll-off is 1 at the centre and grows towards the edges (it divides by the kernel's transform),
    /// symmetric about n/2; at index 0 of 64 numpy gives 2.1480084792647736.
    #[test]
    fn rolloff_is_one_at_the_centre() {
        assert_eq!(rolloff(32, 64), 1.0);
        assert!((rolloff(0, 64) - 2.148_008_479_264_773_6).abs() < 1e-12);
        assert!((rolloff(16, 64) - rolloff(48, 64)).abs() < 1e-15);
        assert!(rolloff(0, 64) > rolloff(16, 64));
        assert_eq!(rolloff(0, 1), 1.0);
    }

    /// A point at the grid's low edge (k = −n/2: pos 0) keeps the taps at g ≥ 0; one in the middle keeps all.
    #[test]
    fn edge_taps_are_dropped() {
        let n = 16;
        let k = -8.0;
        let x = (2.0f64 * k).rem_euclid(32.0);
        let first = (x - 3.5).ceil();
        // first = −3 on the periodic grid, BART's g = first + 0 − 0 + … = −3: taps 0..2 are dropped.
        assert_eq!(kept_taps(k, x, first, n, false), (3.0, 6.0));
        assert_eq!(kept_taps(k, x, first, n, true), (0.0, 6.0));
        let x = 2.0 * 0.3;
        assert_eq!(kept_taps(0.3, x, (x - 3.5).ceil(), n, false), (0.0, 6.0));
    }
}
