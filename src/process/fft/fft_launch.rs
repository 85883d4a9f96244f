//! Enqueuing a planned [`Fft`](super::Fft) (`launch`): the copy in, each step of the schedule — a global
//! Stockham pass, an `fft_lines` launch, a transpose, Bluestein's chirp products and spectrum product — and the
//! copy out. Only enqueues: every table and kernel was made by the plan.

use super::axis_plan::{AxisKind, AxisPlan, local_geometry};
use super::fft_plan::{Kernels, Plan, ViewCopy, axis_at, scratch_at};
use super::lines::{LinesKernel, LinesShape};
use super::schedule::{LocalPart, Slot, Step};
use crate::app::Kernel;
use crate::data::{Launch, XData};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use num_complex::Complex64;

impl<T: Element> Plan<T> {
    /// Enqueues the whole transform of `input` into `output` (the arrays the plan was made for).
    pub(super) fn enqueue(&mut self, input: &XData<T>, output: &XData<T>) -> Result<()> {
        let Plan { axes, steps, scratch, copy_in, copy_out, transposes, kernels, lines, index, group } = self;
        let mut kernels = kernels.as_mut();
        let buffers = Buffers { input, output, scratch };
        let sizes = Sizes { index: *index, group: *group };
        if let Some(copy) = copy_in.as_mut() {
            copy.launch()?;
        }
        for step in steps.iter() {
            match *step {
                Step::Pass { radix, ns, n, axis, inverse, scale, src, dst } => {
                    let kernel = pass_kernel(global_kernels(&mut kernels)?, radix)?;
                    let launch = kernel.launch().input("src", buffers.at(src)?).output("dst", buffers.at(dst)?);
                    enqueue_pass(launch, axis_at(axes, axis)?, [radix, ns, n], inverse, scale, sizes)?;
                }
                Step::Local { axis, part, scale, src, dst, kernel, .. } => {
                    let lines = lines_kernel(lines, kernel)?;
                    lines.upgrade_when_built();
                    let LinesKernel { kernel, shape, .. } = lines;
                    let launch = kernel.launch().input("src", buffers.at(src)?).output("dst", buffers.at(dst)?);
                    enqueue_local(launch, axis_at(axes, axis)?, part, shape, scale, sizes)?;
                }
                Step::Transpose { copy } => transpose(transposes, copy)?,
                Step::Pre { axis, src, dst } => {
                    let (src, dst) = (buffers.at(src)?, buffers.at(dst)?);
                    enqueue_chirp_pre(&mut global_kernels(&mut kernels)?.pre, src, dst, axis_at(axes, axis)?, sizes)?;
                }
                Step::Mul { axis, dst } => {
                    enqueue_spectrum_product(
                        &mut global_kernels(&mut kernels)?.mul,
                        buffers.at(dst)?,
                        axis_at(axes, axis)?,
                        sizes,
                    )?;
                }
                Step::Post { axis, src, dst, scale } => {
                    let (src, dst) = (buffers.at(src)?, buffers.at(dst)?);
                    enqueue_chirp_post(
                        &mut global_kernels(&mut kernels)?.post,
                        src,
                        dst,
                        axis_at(axes, axis)?,
                        scale,
                        sizes,
                    )?;
                }
            }
        }
        if let Some(copy) = copy_out.as_mut() {
            copy.launch()?;
        }
        Ok(())
    }
}

/// fft.cl's kernels, which the plan built when a step needs them.
fn global_kernels<'k>(kernels: &'k mut Option<&mut Kernels>) -> Result<&'k mut Kernels> {
    kernels.as_deref_mut().ok_or_else(|| Error::invalid("Fft", "a step needs fft.cl, which the plan did not build"))
}

/// The global-pass kernel of `radix`.
fn pass_kernel(kernels: &mut Kernels, radix: usize) -> Result<&mut Kernel> {
    match kernels.passes.iter_mut().find(|(r, _)| *r == radix) {
        Some((_, kernel)) => Ok(kernel),
        None => Err(Error::invalid("Fft", format!("no kernel for radix {radix}"))),
    }
}

/// The `fft_lines` kernel a `Step::Local` names.
fn lines_kernel(lines: &mut [LinesKernel], kernel: usize) -> Result<&mut LinesKernel> {
    let count = lines.len();
    lines
        .get_mut(kernel)
        .ok_or_else(|| Error::invalid("Fft", format!("a step names fft_lines kernel {kernel} of {count}")))
}

/// Enqueues four-step transpose `copy`.
fn transpose<T: Element>(transposes: &mut [ViewCopy<T>], copy: usize) -> Result<()> {
    let n = transposes.len();
    let transpose = transposes
        .get_mut(copy)
        .ok_or_else(|| Error::invalid("Fft", format!("a step names transpose {copy} of {n}")))?;
    transpose.launch()
}

/// Bluestein's first chirp product on axis `a`: `src` × chirp into `dst`, zero-padded to m. Nothing on an axis
/// that is not Bluestein.
fn enqueue_chirp_pre<T: Element>(
    kernel: &mut Kernel,
    src: &XData<T>,
    dst: &XData<T>,
    a: &AxisPlan<T>,
    sizes: Sizes,
) -> Result<()> {
    let AxisKind::Bluestein { chirp, passes, .. } = &a.kind else { return Ok(()) };
    let count = a.outer * passes.n * a.inner;
    chirp_product(kernel.launch().input("src", src).output("dst", dst), chirp, passes.n, a.inner, count, sizes)
        .enqueue()
}

/// Bluestein's product of the transformed padded lines in `dst` with the transformed chirp, in place.
fn enqueue_spectrum_product<T: Element>(
    kernel: &mut Kernel,
    dst: &XData<T>,
    a: &AxisPlan<T>,
    sizes: Sizes,
) -> Result<()> {
    let AxisKind::Bluestein { kernel_hat, passes, .. } = &a.kind else { return Ok(()) };
    let count = a.outer * passes.n * a.inner;
    let element = std::mem::size_of::<T>() as u64;
    kernel
        .launch()
        .in_out("a", dst)
        .input("kernel_hat", kernel_hat)
        .index("m", sizes.index, passes.n as u64)
        .index("inner", sizes.index, a.inner as u64)
        .index("total", sizes.index, count as u64)
        .global(&[sizes.global(count)])
        .local(&[sizes.group])
        .work(2 * count as u64 * element, 6 * count as u64)
        .enqueue()
}

/// Bluestein's last chirp product on axis `a`: the first n of each padded line of `src` × chirp × `scale` into
/// `dst`. Nothing on an axis that is not Bluestein.
fn enqueue_chirp_post<T: Element>(
    kernel: &mut Kernel,
    src: &XData<T>,
    dst: &XData<T>,
    a: &AxisPlan<T>,
    scale: f64,
    sizes: Sizes,
) -> Result<()> {
    let AxisKind::Bluestein { chirp, passes, .. } = &a.kind else { return Ok(()) };
    let count = a.outer * chirp.len() * a.inner;
    chirp_product(kernel.launch().input("src", src).output("dst", dst), chirp, passes.n, a.inner, count, sizes)
        .scalar("scale", <T::Real as Element>::from_c64(Complex64::new(scale, 0.0)))
        .enqueue()
}

/// The arguments Bluestein's two chirp products share after their input and output: the chirp (length n), the
/// padded length m, the inner extent and the element count. `bluestein_post` takes the scale after these.
fn chirp_product<'k, T: Element>(
    launch: Launch<'k>,
    chirp: &XData<T>,
    m: usize,
    inner: usize,
    count: usize,
    sizes: Sizes,
) -> Launch<'k> {
    let element = std::mem::size_of::<T>() as u64;
    launch
        .input("chirp", chirp)
        .index("n", sizes.index, chirp.len() as u64)
        .index("m", sizes.index, m as u64)
        .index("inner", sizes.index, inner as u64)
        .index("total", sizes.index, count as u64)
        .global(&[sizes.global(count)])
        .local(&[sizes.group])
        .work(2 * count as u64 * element, 8 * count as u64)
}

/// The index type and the work-group size of the global-pass and Bluestein kernels.
#[derive(Clone, Copy)]
struct Sizes {
    index: IndexType,
    group: usize,
}

impl Sizes {
    /// `count` work-items rounded up to whole groups.
    fn global(&self, count: usize) -> usize {
        count.div_ceil(self.group) * self.group
    }
}

/// The arrays a step's [`Slot`]s name.
struct Buffers<'a, T: Element> {
    input: &'a XData<T>,
    output: &'a XData<T>,
    scratch: &'a [XData<T>],
}

impl<T: Element> Buffers<'_, T> {
    fn at(&self, slot: Slot) -> Result<&XData<T>> {
        match slot {
            Slot::Input => Ok(self.input),
            Slot::Output => Ok(self.output),
            Slot::Scratch(k) => scratch_at(self.scratch, k),
        }
    }
}

/// Enqueues one global Stockham pass (`[radix, ns, n]`) of axis `a`, its input and output already set.
fn enqueue_pass<T: Element>(
    launch: Launch<'_>,
    a: &AxisPlan<T>,
    [radix, ns, n]: [usize; 3],
    inverse: bool,
    scale: f64,
    sizes: Sizes,
) -> Result<()> {
    let roots = match &a.kind {
        AxisKind::Stockham(p) => &p.roots,
        AxisKind::Bluestein { passes, .. } => &passes.roots,
        // Four-step axes never take global passes; their first part's roots stand in.
        AxisKind::FourStep { first, .. } => &first.roots,
    };
    let count = a.outer * (n / radix) * a.inner;
    let element = std::mem::size_of::<T>() as u64;
    let bytes = 2 * (a.outer * n * a.inner) as u64 * element;
    let flops = (a.outer * n * a.inner) as u64 * 5 * (radix.ilog2().max(1) as u64);
    launch
        .input("roots", roots)
        .index("n", sizes.index, n as u64)
        .index("inner", sizes.index, a.inner as u64)
        .index("ns", sizes.index, ns as u64)
        .index("total", sizes.index, count as u64)
        .scalar("scale", <T::Real as Element>::from_c64(Complex64::new(scale, 0.0)))
        .scalar("inverse", i32::from(inverse))
        .global(&[sizes.global(count)])
        .local(&[sizes.group])
        .work(bytes, flops)
        .enqueue()
}

/// Enqueues one `fft_lines` launch of `part` of axis `a` in groups of `shape`, its input and output already set.
fn enqueue_local<T: Element>(
    launch: Launch<'_>,
    a: &AxisPlan<T>,
    part: LocalPart,
    shape: &LinesShape,
    scale: f64,
    sizes: Sizes,
) -> Result<()> {
    let (passes, lines, input_lines, output_lines) = local_geometry(a, part)?;
    if passes.local.is_none() {
        return Ok(());
    }
    // The four-step twiddles of a first part: ω_n^{j2·k1}, j2 = (l / inner) mod n2, from the two-level table.
    let (tw_roots, tw_n2) = match (&a.kind, part) {
        (AxisKind::FourStep { twiddles, n2, .. }, LocalPart::First) => (twiddles, *n2),
        _ => (&passes.roots, 1),
    };
    let (chirp, hat) = match &a.kind {
        AxisKind::Bluestein { chirp, kernel_hat, .. } => (chirp, kernel_hat),
        _ => (&passes.roots, &passes.roots),
    };
    let elements = (lines * passes.n) as u64;
    let flops = 5 * elements * (passes.n as f64).log2().ceil() as u64;
    let element = std::mem::size_of::<T>() as u64;
    let mut launch = launch.input("roots", &passes.roots).index("lines", sizes.index, lines as u64);
    let geometry = ["in_q", "in_p", "in_s", "out_q", "out_p", "out_s"];
    for (name, value) in geometry.into_iter().zip(input_lines.into_iter().chain(output_lines)) {
        launch = launch.index(name, sizes.index, value as u64);
    }
    launch
        .scalar("scale", <T::Real as Element>::from_c64(Complex64::new(scale, 0.0)))
        .input("tw_roots", tw_roots)
        .index("tw_n2", sizes.index, tw_n2 as u64)
        .index("tw_inner", sizes.index, a.inner as u64)
        .input("chirp", chirp)
        .input("hat", hat)
        .global(&[shape.groups(lines) * shape.group_size()])
        .local(&[shape.group_size()])
        .work(2 * elements * element, flops)
        .enqueue()
}
