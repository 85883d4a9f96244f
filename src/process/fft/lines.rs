//! The register FFT kernel `fft_lines` (kernels/fft_lines.cl): how its constants are chosen for one length and
//! line layout, and the generated program text. Every pass of a length-n transform runs in one launch with the
//! data in registers; local memory is only the exchange between passes, so one buffer (or half of one, real and
//! imaginary parts in turn) holds a line, and 8192-point c32 lines fit in one work-group.

use crate::app::{ClApp, Kernel, Program};
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

/// The environment variable that overrides the local memory, in bytes, an `fft_lines` group may use (default:
/// 160 KiB on NVIDIA GPUs of compute capability 9, else what the device reports, at most 47 KiB; a tuning knob
/// for benchmarks, and the way back to the reported limit should a driver refuse more).
pub const FFT_LOCAL_BUDGET_ENV: &str = "CLIPER_FFT_LOCAL_BUDGET";

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
    /// A shape of the same lines whose program compiles sooner, to run while this one's builds (see
    /// [`QUICK_ELEMENTS`]); `None` when this one is as quick to build.
    pub quick: Option<Box<LinesShape>>,
}

/// Values in the low table of a four-step's twiddles ([`super::host_fft::split_twiddles`]); a power of two, so
/// that `fft_lines` splits an exponent with a mask and a shift (`TW_SHIFT`).
pub(super) const TWIDDLE_BLOCK: usize = 1 << TWIDDLE_SHIFT;
const TWIDDLE_SHIFT: usize = 12;

/// The most values a work-item of columns holds; longer columns take the four-step. Only Hopper's 160 KiB let
/// columns reach more (47 KiB holds 4 adjacent c32 columns of at most 2940 points, 46 values): there 4096-point
/// c32 columns fit a group at 64 values per work-item, the 2²⁴ transform split 4096 × 4096, and its cold `init`
/// took 2.4 s against 0.8 (NVIDIA compiles 64-value programs in 1.6–2.4 s), while its first part ran no faster
/// than 2048-point columns at 32 values (0.166 against 0.164 ms, H200).
const MAX_COLUMN_VALUES: usize = 48;

/// The name builds of `fft_lines` programs go by.
const PROGRAM_NAME: &str = "fft_lines.cl";

/// Values per work-item of the shape that runs while a long rows' shape of 64 builds: 8192-point c32 rows on the
/// H200 (driver 580) compiled in 0.55 s with 32 against 1.6 s with 64, and `fft2` 8192² ran in 1.16 ms against
/// 1.05 (`docs/benchmarks.md`, 2026-11-29 afternoon).
const QUICK_ELEMENTS: usize = 32;

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
        let chosen = std::env::var(FFT_ELEMENTS_ENV).ok().and_then(|v| v.parse::<usize>().ok());
        let request = LinesRequest { n, columns, lines, element, budget, max_group };
        let shape = request.fit(radices, largest, chosen.unwrap_or(if long_rows { 64 } else { 16 }))?;
        let quick = if long_rows && chosen.is_none() {
            request.fit(shape.radices.clone(), largest, QUICK_ELEMENTS)
        } else {
            None
        };
        Some(LinesShape { quick: quick.filter(|q| *q != shape).map(Box::new), ..shape })
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
        let (source, options) = self.source::<T>(index, variant)?;
        app.build_program(PROGRAM_NAME, &source, &options)
    }

    /// [`LinesShape::program`] when it needs no compile (built before in this `ClApp` or cached on disk).
    pub fn built_program<T: Element>(
        &self,
        app: &ClApp,
        index: IndexType,
        variant: LinesVariant,
    ) -> Result<Option<Program>> {
        let (source, options) = self.source::<T>(index, variant)?;
        app.built_program(PROGRAM_NAME, &source, &options)
    }

    /// The program's source and build options.
    fn source<T: Element>(&self, index: IndexType, variant: LinesVariant) -> Result<(String, String)> {
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
            ("TW_SHIFT", TWIDDLE_SHIFT),
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
        Ok((kernels::with_common(&source), options))
    }
}

/// An `fft_lines` kernel of a plan and the shape it launches with. While the plan's shape builds on a thread of
/// its own (`upgrade`), its quick shape's kernel runs; launches switch once that build is done.
pub(super) struct LinesKernel {
    pub kernel: Kernel,
    pub shape: LinesShape,
    upgrade: Option<Upgrade>,
}

/// A shape's program building on another thread.
struct Upgrade {
    shape: LinesShape,
    /// `Some` until joined; dropping a plan waits for it, so no build outlives the process that started it.
    build: Option<std::thread::JoinHandle<Result<Kernel>>>,
}

impl Drop for Upgrade {
    fn drop(&mut self) {
        if let Some(build) = self.build.take() {
            let _ = build.join();
        }
    }
}

impl LinesKernel {
    /// The kernel of `shape` for `variant`: built here, or — when `shape` has a quick shape and its own program
    /// would have to be compiled — the quick shape's, with `shape`'s compiling on a new thread from then on.
    pub fn build<T: Element>(
        app: &ClApp,
        shape: &LinesShape,
        index: IndexType,
        variant: LinesVariant,
    ) -> Result<LinesKernel> {
        let kernel = |program: Program| -> Result<Kernel> { Ok(program.kernel("fft_lines")?.owned_by("Fft")) };
        let Some(quick) = shape.quick.as_deref() else {
            return LinesKernel::ready(kernel(shape.program::<T>(app, index, variant)?)?, shape);
        };
        if let Some(built) = shape.built_program::<T>(app, index, variant)? {
            return LinesKernel::ready(kernel(built)?, shape);
        }
        // The quick program first, on its own: NVIDIA's compiler serialises much of two builds at once (8192-point
        // rows: the quick build took 2.6 s beside the planned one's, against 0.55 s alone).
        let built = kernel(quick.program::<T>(app, index, variant)?)?;
        let (on_thread, best) = (app.clone(), shape.clone());
        let build = std::thread::spawn(move || kernel(best.program::<T>(&on_thread, index, variant)?));
        let upgrade = Upgrade { shape: shape.clone(), build: Some(build) };
        Ok(LinesKernel { kernel: built, shape: quick.clone(), upgrade: Some(upgrade) })
    }

    /// `kernel`, of `shape`'s program, with nothing building.
    fn ready(kernel: Kernel, shape: &LinesShape) -> Result<LinesKernel> {
        Ok(LinesKernel { kernel, shape: shape.clone(), upgrade: None })
    }

    /// Takes the better shape's kernel once its build has finished (and its group fits the kernel's limit); a
    /// build that failed leaves the quick kernel in place for good.
    pub fn upgrade_when_built(&mut self) {
        let Some(upgrade) = self.upgrade.as_mut() else { return };
        if !upgrade.build.as_ref().is_some_and(std::thread::JoinHandle::is_finished) {
            return;
        }
        let built = upgrade.build.take().map(std::thread::JoinHandle::join);
        if let Some(Ok(Ok(kernel))) = built
            && kernel.max_work_group_size().is_ok_and(|limit| limit >= upgrade.shape.group_size())
        {
            self.kernel = kernel;
            self.shape = upgrade.shape.clone();
        }
        self.upgrade = None;
    }

    /// Whether a better shape is still building.
    #[cfg(test)]
    pub fn upgrading(&self) -> bool {
        self.upgrade.is_some()
    }
}

/// What a [`LinesShape`] is planned for: `lines` lines of length `n`, adjacent in memory when `columns`, of
/// `element`-byte values, in `budget` bytes of local memory and groups of at most `max_group` work-items.
struct LinesRequest {
    n: usize,
    columns: bool,
    lines: usize,
    element: usize,
    budget: usize,
    max_group: usize,
}

impl LinesRequest {
    /// The shape whose work-items hold at least `elements` values (and at least the `largest` radix).
    fn fit(&self, radices: Vec<usize>, largest: usize, elements: usize) -> Option<LinesShape> {
        let LinesRequest { n, columns, lines, element, budget, max_group } = *self;
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
            if cols * tpl > max_group.min(1024) || n.div_ceil(tpl) > MAX_COLUMN_VALUES {
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
        fits(cols, split).then_some(LinesShape { n, radices, cols, tpl, columns, split, quick: None })
    }
}

/// What one `fft_lines` launch computes besides the passes of its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LinesVariant {
    /// The inverse direction.
    pub inverse: bool,
    /// A four-step's first part: results × ω_n^{row·e} (n = N·tw_n2), from the two-level table of [`TWIDDLE_BLOCK`].
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
