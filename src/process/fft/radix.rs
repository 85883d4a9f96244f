//! The constant tables both FFT programs (the global passes and `fft_lines`) put in front of
//! `kernels/fft_butterflies.cl`.

use std::f64::consts::PI;
use std::fmt::Write as _;

/// The cos/sin tables of radices 3, 5, 7, 8 and 16, as OpenCL C prepended to `kernels/fft_butterflies.cl`.
pub(super) fn tables() -> String {
    let mut src = String::new();
    for r in [3usize, 5, 7, 8, 16] {
        let list = |f: fn(f64) -> f64| {
            (0..r).map(|q| format!("(R){:.20e}", f(2.0 * PI * q as f64 / r as f64))).collect::<Vec<_>>().join(", ")
        };
        let _ = writeln!(src, "constant R fft_cos_{r}[{r}] = {{{}}};", list(f64::cos));
        let _ = writeln!(src, "constant R fft_sin_{r}[{r}] = {{{}}};", list(f64::sin));
    }
    src
}
