//! The register FFT kernel `fft_lines` (kernels/fft_lines.cl): how its constants are chosen for one length and
//! line layout, and the generated program text. Every pass of a length-n transform runs in one launch with the
//! data in registers; local memory is only the exchange between passes, so one buffer (or half of one, real and
//! imaginary parts in turn) holds a line, and 8192-point c32 lines fit in one work-group.

use crate::app::{ClApp, Program};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use std::fmt::Write as _;

/// Radices of `fft_lines` for `n`: 16s for the power of two (one 8, 4 or 2 where needed, and 8·4 rather than
/// 16·2), then 3, 5 and 7; `None` when n has a larger prime factor.
pub(super) fn lines_radices(n: usize) -> Option<Vec<usize>> {
    let mut rest = n;
    let mut twos = 0;
    while rest.is_multiple_of(2) {
        rest /= 2;
        twos += 1;
    }
    let mut radices = vec![16; twos / 4];
    match twos % 4 {
        1 if twos > 4 => {
            radices.pop();
            radices.extend([8, 4]);
        }
        1 => radices.push(2),
        2 => radices.push(4),
        3 => radices.push(8),
        _ => {}
    }
    for p in [3, 5, 7] {
        while rest.is_multiple_of(p) {
            radices.push(p);
            rest /= p;
        }
    }
    (rest == 1).then_some(radices)
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The environment variable that overrides the elements each work-item holds (`fft_lines`' register budget,
/// default 16; a tuning knob for benchmarks).
pub const FFT_ELEMENTS_ENV: &str = "CLIPER_FFT_ELEMENTS";

/// The environment variable that overrides the most work-items per `fft_lines` group (default 256; a tuning
/// knob for benchmarks: more asks the compiler for fewer registers per work-item).
pub const FFT_GROUP_ENV: &str = "CLIPER_FFT_GROUP";

/// The most work-items per `fft_lines` group: [`FFT_GROUP_ENV`] or 256 (the H100 allowed no more to 8192-point
/// c32 lines, whose work-items hold 32 values each).
pub(super) fn group_cap() -> usize {
    std::env::var(FFT_GROUP_ENV).ok().and_then(|v| v.parse::<usize>().ok()).filter(|&g| g > 0).unwrap_or(256)
}

/// One `fft_lines` configuration: a length, its radices, and how a work-group covers lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct LinesShape {
    pub n: usize,
    pub radices: Vec<usize>,
    /// Lines per work-group.
    pub cols: usize,
    /// Work-items per line.
    pub tpl: usize,
    /// The group's lines are adjacent in memory (inner > 1).
    pub columns: bool,
    /// Real and imaginary parts exchanged in turn through a buffer of reals.
    pub split: bool,
}

impl LinesShape {
    /// How `lines` lines of length `n`, adjacent in memory when `columns`, would run in at most `budget` bytes of
    /// local memory and `max_group` work-items per group (`bluestein`: both of its transforms in the launch);
    /// `None` when they do not fit.
    pub fn plan(
        n: usize,
        columns: bool,
        bluestein: bool,
        lines: usize,
        element: usize,
        budget: usize,
        max_group: usize,
    ) -> Option<Self> {
        let radices = lines_radices(n)?;
        if n < 2 || lines == 0 {
            return None;
        }
        let largest = *radices.iter().max()?;
        // Power-of-two rows whose exchange must be split (8192 c32 and up) ran 25% faster with 64 values per
        // work-item and 128 per group than with 32 and 256 on the H100 (0.52 against 0.65 ms for 8192 rows of
        // 8192). Bluestein's two transforms in one launch spilled at 64 (0.43 → 1.36 ms for 4093 rows), and so did
        // mixed radices with guards (8400-point rows of the 63×63 convolution: 4.4 → 6.4 ms).
        let long_rows = !columns && !bluestein && n.is_power_of_two() && n * element > budget;
        let default = if long_rows { 64 } else { 16 };
        let elements = std::env::var(FFT_ELEMENTS_ENV).ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(default);
        let min_elements = largest.max(elements.min(n));
        // Work-items per line: a divisor of n / lcm(radices) keeps every pass free of guards; take the largest
        // that leaves each work-item at least `min_elements` values, unless that leaves it more than twice as
        // many (then guards are cheaper than the registers).
        let lcm = radices.iter().fold(1, |a, &r| a / gcd(a, r) * r);
        let base = n / lcm;
        let exact = (1..=base).rev().find(|d| base.is_multiple_of(*d) && n / d >= min_elements).unwrap_or(1);
        let mut tpl = if n / exact <= 2 * min_elements { exact } else { (n / min_elements).max(1) };
        tpl = tpl.min(max_group.max(1));
        let fits = |cols: usize, split: bool| {
            let words = if columns { n * cols } else { cols * (n + (n >> pad_shift(element, split))) };
            words * if split { element / 2 } else { element } <= budget
        };
        let (cols, split) = if columns {
            // 128 bytes of adjacent lines per load at best, 32 (one memory sector) at least; long columns hold
            // more values per work-item rather than fewer lines.
            let (best, least) = ((128 / element).max(1), (32 / element).max(1));
            tpl = tpl.min((max_group.min(1024) / least).max(1));
            let mut cols = best;
            while cols > least && (cols * tpl > max_group.min(1024) || !fits(cols, true)) {
                cols /= 2;
            }
            if cols * tpl > max_group.min(1024) || n.div_ceil(tpl) > 64 {
                return None;
            }
            // Short columns (a four-step's first part: 2 work-items per line) take more lines, so a group still
            // has 128 work-items to hide latency with.
            while cols * tpl < 128 && cols < 64 && 2 * cols * tpl <= max_group && fits(2 * cols, false) {
                cols *= 2;
            }
            (cols, !fits(cols, false))
        } else if n.div_ceil(tpl) > 64 {
            // More than 64 values per work-item would spill registers.
            return None;
        } else {
            let mut cols = (256 / tpl).clamp(1, lines.next_power_of_two());
            while cols > 1 && (cols * tpl > max_group || !fits(cols, true)) {
                cols /= 2;
            }
            (cols, !fits(cols, false))
        };
        fits(cols, split).then_some(LinesShape { n, radices, cols, tpl, columns, split })
    }

    /// Work-items per group.
    pub fn group_size(&self) -> usize {
        self.cols * self.tpl
    }

    /// Groups for `lines` lines.
    pub fn groups(&self, lines: usize) -> usize {
        lines.div_ceil(self.cols)
    }

    /// `FFT_PASSES`: one load from global memory, the butterflies of every pass with an exchange between
    /// passes (for Bluestein twice, with the product by hat between), one store to global memory.
    fn passes(&self, bluestein: bool) -> Result<(String, usize)> {
        let mut ns = 1;
        let mut steps = Vec::new();
        for &r in &self.radices {
            let m = self.n / r;
            let k = m.div_ceil(self.tpl);
            steps.push((r, m, ns, k, usize::from(!m.is_multiple_of(self.tpl))));
            ns *= r;
        }
        let vmax = steps.iter().map(|s| s.0 * s.3).max().unwrap_or(1);
        let mut text = String::from("#define FFT_PASSES \\\n");
        let Some(&(r0, m0, _, k0, g0)) = steps.first() else {
            return Err(Error::invalid("fft_lines", format!("no radices for lines of length {}", self.n)));
        };
        let _ = writeln!(text, "    PASS_LOAD_GLOBAL({r0}, {m0}, {k0}, {g0}) \\");
        for round in 0..=usize::from(bluestein) {
            for (i, &(r, m, ns, k, g)) in steps.iter().enumerate() {
                let _ = writeln!(text, "    PASS_COMPUTE({r}, {ns}, {k}) \\");
                if let Some(&(r2, m2, _, k2, g2)) = steps.get(i + 1) {
                    let _ = writeln!(text, "    PASS_EXCHANGE({r}, {m}, {ns}, {k}, {g}, {r2}, {m2}, {k2}, {g2}) \\");
                } else if round == 0 && bluestein {
                    // The last pass leaves the results at natural positions (ns = m), the first pass's inputs.
                    let _ = writeln!(text, "    PASS_BLUESTEIN_MID({r}, {m}, {k}) \\");
                    let _ = writeln!(text, "    PASS_EXCHANGE({r}, {m}, {ns}, {k}, {g}, {r0}, {m0}, {k0}, {g0}) \\");
                } else {
                    let _ = writeln!(text, "    PASS_STORE_GLOBAL({r}, {m}, {k}, {g})");
                }
            }
        }
        Ok((text, vmax))
    }

    /// The program for element type `T` and `variant`, built (or taken from the cache).
    pub fn program<T: Element>(&self, app: &ClApp, index: IndexType, variant: LinesVariant) -> Result<Program> {
        let LinesVariant { inverse, twiddle_out, bluestein } = variant;
        let (passes, vmax) = self.passes(bluestein.is_some())?;
        let element = std::mem::size_of::<T>();
        let mut defines = String::new();
        for (name, value) in [
            ("N", self.n),
            ("C", self.cols),
            ("TPL", self.tpl),
            ("COLUMNS", usize::from(self.columns)),
            ("SPLIT", usize::from(self.split)),
            ("INVERSE", usize::from(inverse)),
            ("TWIDDLE_OUT", usize::from(twiddle_out)),
            ("PAD_SHIFT", pad_shift(element, self.split) as usize),
            ("VMAX", vmax),
            ("BLUESTEIN", usize::from(bluestein.is_some())),
            ("N_IN", bluestein.unwrap_or(self.n)),
        ] {
            let _ = writeln!(defines, "#define {name} {value}u");
        }
        let source = format!(
            "{}\n{}\n{defines}{passes}\n{}",
            super::radix::tables(),
            kernels::FFT_BUTTERFLIES,
            kernels::FFT_LINES
        );
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        app.build_program("fft_lines.cl", &kernels::with_common(&source), &options)
    }
}

/// What one `fft_lines` launch computes besides the passes of its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LinesVariant {
    /// The inverse direction.
    pub inverse: bool,
    /// A four-step's first part: results × ω_{tw_n}^{row·e}.
    pub twiddle_out: bool,
    /// Bluestein's whole algorithm for lines of this length (the shape's n is the padded length).
    pub bluestein: Option<usize>,
}

/// Rows pad one local element per 128 bytes, so stride-R stores fall in different banks.
fn pad_shift(element: usize, split: bool) -> u32 {
    let word = if split { element / 2 } else { element };
    (128 / word).max(1).ilog2()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radices_prefer_sixteen() {
        assert_eq!(lines_radices(8192), Some(vec![16, 16, 8, 4]));
        assert_eq!(lines_radices(4096), Some(vec![16, 16, 16]));
        assert_eq!(lines_radices(2), Some(vec![2]));
        assert_eq!(lines_radices(1000), Some(vec![8, 5, 5, 5]));
        assert_eq!(lines_radices(97), None);
    }

    #[test]
    fn long_c32_rows_split_and_columns_group_sixteen() {
        let rows = LinesShape::plan(8192, false, false, 8192, 8, 47 * 1024, 256).unwrap();
        assert!(rows.split && rows.cols == 1 && rows.tpl == 128, "{rows:?}");
        let bluestein = LinesShape::plan(8192, false, true, 4093, 8, 47 * 1024, 256).unwrap();
        assert!(bluestein.split && bluestein.tpl == 256, "{bluestein:?}");
        let cols = LinesShape::plan(512, true, false, 1 << 16, 8, 47 * 1024, 1024).unwrap();
        assert!(cols.columns && cols.cols == 16 && cols.tpl == 32, "{cols:?}");
        assert!(LinesShape::plan(8192, true, false, 8192, 8, 47 * 1024, 1024).is_none());
    }
}
