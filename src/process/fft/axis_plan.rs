//! The plan of one transformed axis ([`AxisPlan`]): Stockham passes, a four-step split or Bluestein, with the
//! device tables each needs (roots of unity, chirps) and the `fft_lines` shapes that fit this device.

use super::fft_params::{FftAlgorithm, FftDirection, FftParams};
use super::host_fft::{bluestein_tables, factorize, roots, split_twiddles};
use super::lines::{FFT_LOCAL_BUDGET_ENV, LinesShape, TWIDDLE_BLOCK};
use super::radix;
use super::schedule::{AxisShape, LocalPart, ScheduledAxis};
use crate::app::ClApp;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use num_complex::Complex64;

/// The part of fft.cl a program holds (a program compiles only what its user launches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FftPart {
    /// The global passes `fft_passR` and Bluestein's three steps (with the radix tables and the butterflies).
    Passes = 1,
    /// irfft's `hermitian_extend`.
    HermitianExtend = 2,
    /// `fft_roots`, the device's table of roots of unity.
    Roots = 3,
}

/// The FFT kernels of `part` for element type `T` and index type `index`.
pub(super) fn fft_program<T: Element>(app: &ClApp, index: IndexType, part: FftPart) -> Result<crate::app::Program> {
    let options = format!("{} -DIDX={} -DFFT_PART={}", T::build_options(), index.cl_type(), part as u8);
    let source = match part {
        FftPart::Passes => format!("{}\n{}\n{}", radix::tables(), kernels::FFT_BUTTERFLIES, kernels::FFT),
        FftPart::HermitianExtend | FftPart::Roots => kernels::FFT.to_string(),
    };
    app.build_program("fft.cl", &kernels::with_common(&source), &options)
}

/// Uploads float64 complex values as `T`.
fn upload<T: Element>(app: &ClApp, values: &[Complex64]) -> Result<XData<T>> {
    let host: Vec<T> = values.iter().map(|&v| T::from_c64(v)).collect();
    XData::from_slice(app, &[host.len()], &host)
}

/// Root tables at least this long are computed on the device (where it has doubles): the host's 2^24 took
/// 0.57 s of `init` on one core, 0.17 s on sixteen.
const DEVICE_ROOTS_FROM: usize = 1 << 20;

/// The forward roots `exp(−2πi·k/n)`, k < n, computed on the device in double precision by `fft_roots` and
/// rounded once to `T` (the device must have `cl_khr_fp64`).
pub(super) fn device_roots<T: Element>(app: &ClApp, n: usize) -> Result<XData<T>> {
    let out = XData::<T>::uninit(app, "Fft", &[n])?;
    let index = IndexType::for_extent(n as u64);
    let mut kernel = fft_program::<T>(app, index, FftPart::Roots)?.kernel("fft_roots")?.owned_by("Fft");
    kernel
        .launch()
        .output("roots", &out)
        .index("n", index, n as u64)
        .global(&[n.div_ceil(256) * 256])
        .local(&[256])
        .enqueue()?;
    Ok(out)
}

/// Stockham passes for one length: (radix, ns) per global pass, the roots table, and the `fft_lines` shape when
/// all passes run in one launch instead.
pub(super) struct Passes<T: Element> {
    pub(super) n: usize,
    pub(super) steps: Vec<(usize, usize)>,
    pub(super) roots: XData<T>,
    pub(super) local: Option<LinesShape>,
}

/// `fft_lines`' local memory on Hopper. NVIDIA's OpenCL reports 48 KiB for every GPU, but a Hopper SM gives a
/// group up to 227 KiB, and driver 580 builds and runs `fft_lines` groups past 48 KiB with right results
/// (tests/fft.rs's value tests on the H200 with budgets of 96, 160 and 196 KiB). 8192-point c32 rows then exchange whole complex
/// values (69.6 KiB) instead of real and imaginary parts in turn: 0.386 ms against 0.453 for 8192 rows, `fft2`
/// 8192² 1.027 → 0.96 ms, 4093² (Bluestein) 0.974 → 0.875; 96 KiB gave the 2²⁴ transform a slower split
/// (0.374 against 0.354 ms with 160 or 196 KiB). `docs/benchmarks.md`, 2026-11-29 (evening, FFT).
const HOPPER_LOCAL_BUDGET: usize = 160 * 1024;

/// Local memory one work-group may use for `fft_lines`: [`FFT_LOCAL_BUDGET_ENV`] when set; 160 KiB on NVIDIA
/// GPUs of compute capability 9 ([`HOPPER_LOCAL_BUDGET`]); else what the device offers, at most 47 KiB (under
/// NVIDIA's 48 KiB limit; CPUs report megabytes of "local" memory that is only cache).
fn local_budget(info: &crate::app::DeviceInfo) -> usize {
    if let Some(budget) = std::env::var(FFT_LOCAL_BUDGET_ENV).ok().and_then(|v| v.parse().ok()) {
        return budget;
    }
    if info.compute_capability.is_some_and(|(major, _)| major == 9) {
        return HOPPER_LOCAL_BUDGET;
    }
    // Less 1 KiB: NVIDIA's driver refused a group asking for exactly 48 KiB (CL_OUT_OF_RESOURCES at enqueue).
    (info.local_mem_bytes as usize).min(48 * 1024).saturating_sub(1024)
}

impl<T: Element> Passes<T> {
    fn new(app: &ClApp, n: usize, radices: &[usize]) -> Result<Passes<T>> {
        let mut ns = 1;
        let steps = radices
            .iter()
            .map(|&r| {
                let step = (r, ns);
                ns *= r;
                step
            })
            .collect();
        // The forward roots; the kernels conjugate them for inverse passes.
        let roots = if n >= DEVICE_ROOTS_FROM && app.supports::<f64>() {
            device_roots(app, n)?
        } else {
            upload(app, &roots(n, -1.0))?
        };
        Ok(Passes { n, steps, roots, local: None })
    }
}

/// How one axis is transformed.
pub(super) enum AxisKind<T: Element> {
    /// Every prime factor is at most 7.
    Stockham(Passes<T>),
    /// Bluestein: chirp for this direction, the transformed conjugate chirp (already × 1/m), passes of length m
    /// (all of it in one `fft_lines` launch when `passes.local` is set; on rows transposed from columns when
    /// `transposed`).
    Bluestein { chirp: XData<T>, kernel_hat: XData<T>, passes: Passes<T>, transposed: bool },
    /// n = n1·n2 too long for local memory: length-n1 transforms down the columns of [n1, n2] blocks (with the
    /// twiddles ω_n^{j2·k1} on the way out, from `twiddles`: [`split_twiddles`] of n), then length-n2 transforms
    /// along the rows, which write the [n2, n1] order themselves on columns and leave it to a transpose on rows.
    FourStep { first: Passes<T>, second: Passes<T>, twiddles: XData<T>, n1: usize, n2: usize },
}

/// How one axis of the array, viewed as `[outer, n, inner]`, is transformed, and its normalisation factor.
pub(super) struct AxisPlan<T: Element> {
    pub(super) outer: usize,
    pub(super) inner: usize,
    pub(super) scale: f64,
    pub(super) kind: AxisKind<T>,
}

impl<T: Element> AxisPlan<T> {
    /// What the schedule needs to know of this axis.
    pub(super) fn scheduled(&self) -> ScheduledAxis {
        let shape = match &self.kind {
            AxisKind::Stockham(p) if p.local.is_some() => AxisShape::Local,
            AxisKind::Stockham(p) => AxisShape::Passes { n: p.n, steps: p.steps.clone() },
            &AxisKind::FourStep { n1, n2, .. } => AxisShape::FourStep { n1, n2 },
            AxisKind::Bluestein { passes, chirp, transposed, .. } if passes.local.is_some() => {
                AxisShape::BluesteinLocal { n: chirp.len(), transposed: *transposed }
            }
            AxisKind::Bluestein { passes, .. } => {
                AxisShape::BluesteinPasses { m: passes.n, steps: passes.steps.clone() }
            }
        };
        ScheduledAxis { outer: self.outer, inner: self.inner, scale: self.scale, shape }
    }

    /// The plan of one axis, `[outer, n, inner]`, and the size of the Bluestein work arrays it needs (0 when
    /// it runs in one `fft_lines` launch or is not Bluestein).
    pub(super) fn new(
        app: &ClApp,
        [outer, n, inner]: [usize; 3],
        params: &FftParams,
        max_group: usize,
    ) -> Result<(AxisPlan<T>, usize)> {
        let scale = params.norm.scale(n, params.direction);
        let local = match params.algorithm {
            FftAlgorithm::Auto => app.device().kind != crate::app::DeviceKind::Cpu,
            FftAlgorithm::LocalMemory => true,
            // The host plan never reaches here; its kernels' counterpart on a CPU is the global passes.
            FftAlgorithm::GlobalPasses | FftAlgorithm::Host => false,
        };
        let fit = LinesFit {
            budget: local.then(|| local_budget(app.device())),
            max_group: app.device().max_work_group_size.clamp(1, max_group),
            element: std::mem::size_of::<T>(),
        };
        let mut largest = 0;
        let kind = match factorize(n) {
            Some(radices) => {
                let whole = fit.shape(n, inner > 1, outer * inner);
                let split = if whole.is_none() { four_step_split(n, inner, outer, &fit) } else { None };
                match split {
                    Some((n1, n2, l1, l2)) => {
                        let mut first = Passes::new(app, n1, &factorize(n1).unwrap_or_default())?;
                        let mut second = Passes::new(app, n2, &factorize(n2).unwrap_or_default())?;
                        (first.local, second.local) = (Some(l1), Some(l2));
                        let twiddles = upload(app, &split_twiddles(n, TWIDDLE_BLOCK, -1.0))?;
                        AxisKind::FourStep { first, second, twiddles, n1, n2 }
                    }
                    _ => AxisKind::Stockham(Passes { local: whole, ..Passes::new(app, n, &radices)? }),
                }
            }
            None => {
                let inverse = params.direction == FftDirection::Inverse;
                let (chirp, hat, m) = bluestein_tables(n, if inverse { 1.0 } else { -1.0 });
                let radices = factorize(m).unwrap_or_default();
                let mut passes = Passes::new(app, m, &radices)?;
                // The whole algorithm in one fft_lines launch where a line of m fits; columns that do not fit go
                // through a transpose to rows and back.
                let mut transposed = false;
                passes.local = fit.bluestein(m, inner > 1, outer * inner);
                if passes.local.is_none() && inner > 1 {
                    passes.local = fit.bluestein(m, false, outer * inner);
                    transposed = passes.local.is_some();
                }
                if passes.local.is_none() {
                    largest = outer * m * inner;
                }
                AxisKind::Bluestein { chirp: upload(app, &chirp)?, kernel_hat: upload(app, &hat)?, passes, transposed }
            }
        };
        Ok((AxisPlan { outer, inner, scale, kind }, largest))
    }
}

/// What `fft_lines` may use on this device: local memory, work-items per group, the element size; `None`
/// budget when the plan takes global passes only.
struct LinesFit {
    budget: Option<usize>,
    max_group: usize,
    element: usize,
}

impl LinesFit {
    fn shape(&self, n: usize, columns: bool, lines: usize) -> Option<LinesShape> {
        LinesShape::plan(n, columns, false, lines, self.element, self.budget?, self.max_group)
    }

    /// The shape of Bluestein's fused launch over padded lines of length m.
    fn bluestein(&self, m: usize, columns: bool, lines: usize) -> Option<LinesShape> {
        LinesShape::plan(m, columns, true, lines, self.element, self.budget?, self.max_group)
    }
}

/// The split n = n1·n2 (n1 ≈ √n) whose two `fft_lines` transforms both fit: the first over the columns of
/// [n1, n2] blocks (lines n2·inner apart), the second along the rows (columns too when inner > 1).
fn four_step_split(
    n: usize,
    inner: usize,
    outer: usize,
    fit: &LinesFit,
) -> Option<(usize, usize, LinesShape, LinesShape)> {
    let mut best: Option<(usize, usize, LinesShape, LinesShape)> = None;
    for n1 in 2..n {
        if !n.is_multiple_of(n1) {
            continue;
        }
        let n2 = n / n1;
        let first = fit.shape(n1, true, outer * n2 * inner);
        let second = fit.shape(n2, inner > 1, outer * n1 * inner);
        if let (Some(l1), Some(l2)) = (first, second) {
            let balance = |a: usize, b: usize| (a as f64 / b as f64).ln().abs();
            if best.as_ref().is_none_or(|b| balance(n1, n2) < balance(b.0, b.1)) {
                best = Some((n1, n2, l1, l2));
            }
        }
    }
    best
}

/// Where a `Step::Local` of `part` reads and writes: the transforms, the line count, and (q, p, s) for the input
/// and the output (line l's element e at (l / q)·p + l mod q + e·s).
#[allow(clippy::type_complexity)]
pub(super) fn local_geometry<T: Element>(
    a: &AxisPlan<T>,
    part: LocalPart,
) -> Result<(&Passes<T>, usize, [usize; 3], [usize; 3])> {
    let (outer, inner) = (a.outer, a.inner);
    let plain = |n: usize| [inner, n * inner, inner];
    Ok(match (&a.kind, part) {
        (AxisKind::Stockham(p), LocalPart::Main) => (p, outer * inner, plain(p.n), plain(p.n)),
        (AxisKind::Bluestein { passes, chirp, transposed, .. }, LocalPart::Bluestein) => {
            let n = chirp.len();
            let lines = if *transposed { [1, n, 1] } else { plain(n) };
            (passes, outer * inner, lines, lines)
        }
        (AxisKind::FourStep { first, n1, n2, .. }, LocalPart::First) => {
            let columns = [n2 * inner, n1 * n2 * inner, n2 * inner];
            (first, outer * n2 * inner, columns, columns)
        }
        (AxisKind::FourStep { second, n1, n2, .. }, LocalPart::Second) => {
            // Columns (inner > 1) write X[k1 + n1·k2] in place of a transpose; rows leave it to the transpose.
            let out = if inner > 1 { [n1 * inner, n1 * n2 * inner, n1 * inner] } else { plain(*n2) };
            (second, outer * n1 * inner, plain(*n2), out)
        }
        _ => return Err(Error::invalid("Fft", format!("no {part:?} transforms on this axis"))),
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_roots_round_the_host_table() {
        let app = ClApp::new().unwrap();
        if !app.supports::<f64>() {
            return;
        }
        for n in [1usize, 7, 1000, 4096] {
            let host = roots(n, -1.0);
            let single = device_roots::<num_complex::Complex32>(&app, n).unwrap().to_vec().unwrap();
            let double = device_roots::<Complex64>(&app, n).unwrap().to_vec().unwrap();
            for ((h, s), d) in host.iter().zip(&single).zip(&double) {
                // float32: the same value, or a neighbour where the two float64 values round apart.
                assert!((h - Complex64::new(f64::from(s.re), f64::from(s.im))).norm() <= 6e-8, "n={n}: {h} vs {s}");
                // float64: the host's angle 2πk/n is itself rounded (up to 2π·2⁻⁵³ ≈ 7e-16 of error per
                // component), cospi/sinpi's argument k/n far less: the two differ by a few ulps.
                assert!((h - d).norm() <= 2e-15, "n={n}: {h} vs {d}");
            }
        }
    }
}
