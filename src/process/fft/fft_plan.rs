//! The plan of an [`Fft`](super::Fft) (made in `init`): every axis's [`AxisPlan`], the steps the schedule orders,
//! the scratch arrays, the strided copies in, out and between, and the kernels, built once.

use super::axis_plan::{AxisKind, AxisPlan, FftPart, Passes, fft_program, local_geometry};
use super::fft_params::{FftDirection, FftParams, transformed_axes};
use super::fft_strategy::{FftAxisStrategy, FftPasses, FftStrategy};
use super::host_fft::RADICES;
use super::lines::{LinesKernel, LinesShape, LinesVariant};
use super::schedule::{LocalPart, ScheduledAxis, Slot, Step, schedule};
use crate::app::{ClApp, Kernel};
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::process::layout::CopyPlan;

pub(super) struct Plan<T: Element> {
    pub(super) axes: Vec<AxisPlan<T>>,
    pub(super) steps: Vec<Step>,
    /// Contiguous work arrays: two of the array's size, and two of the largest Bluestein size.
    pub(super) scratch: Vec<XData<T>>,
    /// A strided input copied into scratch 0 first; the result copied from `result` into a strided output.
    pub(super) copy_in: Option<ViewCopy<T>>,
    pub(super) copy_out: Option<ViewCopy<T>>,
    /// Four-step transposes, [outer, n1, n2, inner] → [outer, n2, n1, inner].
    pub(super) transposes: Vec<ViewCopy<T>>,
    /// fft.cl's kernels, when a step needs them (only `fft_lines` launches otherwise).
    pub(super) kernels: Option<Kernels>,
    pub(super) index: IndexType,
    pub(super) group: usize,
    /// The `fft_lines` kernels the `Step::Local`s name.
    pub(super) lines: Vec<LinesKernel>,
}

/// A strided copy between two views fixed in `init`.
pub(super) struct ViewCopy<T: Element> {
    plan: CopyPlan,
    from: XData<T>,
    to: XData<T>,
}

impl<T: Element> ViewCopy<T> {
    fn new(from: XData<T>, to: XData<T>) -> Result<ViewCopy<T>> {
        Ok(ViewCopy { plan: CopyPlan::new("Fft", &from, &to, false, None)?, from, to })
    }

    pub(super) fn launch(&mut self) -> Result<()> {
        self.plan.launch("Fft", &self.from, &self.to)
    }
}

/// The global-pass kernels by radix and Bluestein's three steps.
pub(super) struct Kernels {
    pub(super) passes: Vec<(usize, Kernel)>,
    pub(super) pre: Kernel,
    pub(super) mul: Kernel,
    pub(super) post: Kernel,
}

impl Kernels {
    /// The kernels of fft.cl: Bluestein's steps, and a pass kernel for each of `radices`.
    fn build<T: Element>(app: &ClApp, index: IndexType, radices: &[usize]) -> Result<Kernels> {
        let program = fft_program::<T>(app, index, FftPart::Passes)?;
        let kernel = |name: &str| -> Result<Kernel> { Ok(program.kernel(name)?.owned_by("Fft")) };
        let passes = radices.iter().map(|&r| Ok((r, kernel(&format!("fft_pass{r}"))?))).collect::<Result<_>>()?;
        Ok(Kernels {
            passes,
            pre: kernel("bluestein_pre")?,
            mul: kernel("bluestein_mul")?,
            post: kernel("bluestein_post")?,
        })
    }
}

impl<T: Element> Plan<T> {
    /// The plan of the transform `params` describe of `input` into `output`.
    pub(super) fn new(input: &XData<T>, output: &XData<T>, params: &FftParams) -> Result<Plan<T>> {
        // fft_lines groups of at most `group_cap()` work-items; a device that allows fewer to some kernel gets a
        // plan within that.
        let mut max_group = super::lines::group_cap();
        loop {
            match Plan::within(input, output, params, max_group)? {
                Ok(plan) => return Ok(plan),
                Err(limit) if limit >= 1 && limit < max_group => max_group = 1 << limit.ilog2(),
                Err(limit) => {
                    return Err(Error::Unsupported {
                        what: format!("Fft: an fft_lines kernel allows only {limit} work-items per group here"),
                    });
                }
            }
        }
    }

    /// The plan with `fft_lines` groups of at most `max_group` work-items, or the lower limit a kernel reported.
    fn within(
        input: &XData<T>,
        output: &XData<T>,
        params: &FftParams,
        max_group: usize,
    ) -> Result<std::result::Result<Plan<T>, usize>> {
        let op = "Fft";
        let app = input.app();
        if !app.same_as(output.app()) {
            return Err(Error::invalid(op, "the input and the output belong to different ClApps"));
        }
        let shape = input.shape().to_vec();
        if output.shape() != shape.as_slice() {
            return Err(Error::shape_because(op, &shape, output.shape(), "the input's shape"));
        }
        // (outer, n, inner) of each axis: the array as [outer, n, inner].
        let transformed = transformed_axes(&shape, params)?;
        let total: usize = shape.iter().product();
        // Axes of length 1 change nothing (their scale is 1 in every normalisation).
        let transformed: Vec<(usize, usize, usize)> =
            if total == 0 { Vec::new() } else { transformed.into_iter().filter(|&(_, n, _)| n > 1).collect() };
        let inverse = params.direction == FftDirection::Inverse;
        let mut axis_plans = Vec::new();
        let mut largest = 0usize;
        for &(outer, n, inner) in &transformed {
            let (axis, scratch) = AxisPlan::new(app, [outer, n, inner], params, max_group)?;
            largest = largest.max(scratch);
            axis_plans.push(axis);
        }

        // Buffers: start from the input when it is a plain contiguous array the passes can read, else from a
        // copy in scratch 0; end in the output when it is contiguous and separate from the input, else in a
        // scratch array copied out.
        let plain = |x: &XData<T>| x.is_contiguous() && x.offset() == 0;
        let first = XData::uninit(app, op, &[total.max(1)])?;
        let mut scratch = vec![first.clone(), XData::uninit(app, op, &[total.max(1)])?];
        if largest > 0 {
            scratch.push(XData::uninit(app, op, &[largest])?);
            scratch.push(XData::uninit(app, op, &[largest])?);
        }
        let copy_in = if plain(input) || axis_plans.is_empty() {
            None
        } else {
            Some(ViewCopy::new(input.clone(), first.reshape(&shape)?)?)
        };
        let direct_out = plain(output) && !output.overlaps(input);
        let start = if copy_in.is_some() { Slot::Scratch(0) } else { Slot::Input };
        let scheduled: Vec<ScheduledAxis> = axis_plans.iter().map(AxisPlan::scheduled).collect();
        let (mut steps, specs, end) = schedule(&scheduled, start, direct_out, inverse);
        let view = |slot: Slot, dims: &[usize]| slot_view(input, output, &scratch, slot, dims);
        let transposes = specs
            .iter()
            .map(|t| ViewCopy::new(view(t.from, &t.from_dims)?.permuted_axes(&t.perm)?, view(t.to, &t.to_dims)?))
            .collect::<Result<Vec<_>>>()?;
        // No axis to transform: the result is the input.
        let copy_out = if end == Slot::Output {
            None
        } else {
            let from = match end {
                Slot::Scratch(k) => scratch_at(&scratch, k)?.reshape(&shape)?,
                _ => input.clone(),
            };
            Some(ViewCopy::new(from, output.clone())?)
        };

        let element_count = total.max(largest) as u64;
        let index = IndexType::for_extent(element_count);
        let global =
            |s: &Step| matches!(s, Step::Pass { .. } | Step::Pre { .. } | Step::Mul { .. } | Step::Post { .. });
        let needs_global = steps.iter().any(global);
        let radices: Vec<usize> = RADICES
            .into_iter()
            .filter(|&r| steps.iter().any(|s| matches!(s, Step::Pass { radix, .. } if *radix == r)))
            .collect();
        // fft.cl (global passes, Bluestein's steps), when a step needs it, builds beside the fft_lines programs.
        let (kernels, lines) = std::thread::scope(|scope| {
            let kernels = needs_global.then(|| scope.spawn(|| Kernels::build::<T>(app, index, &radices)));
            let lines = build_lines::<T>(app, &axis_plans, &mut steps, index);
            (kernels.map(|k| joined(k, "building fft.cl")).transpose(), lines)
        });
        let kernels = kernels?;
        let group = 256.min(app.device().max_work_group_size.max(1));
        let lines = match lines? {
            Ok(lines) => lines,
            Err(limit) => return Ok(Err(limit)),
        };
        Ok(Ok(Plan { axes: axis_plans, steps, scratch, copy_in, copy_out, transposes, kernels, lines, index, group }))
    }

    /// How each transformed axis is computed.
    pub(super) fn strategy(&self) -> FftStrategy {
        let passes = |p: &Passes<T>| match &p.local {
            Some(l) => FftPasses::Registers {
                radices: l.radices.clone(),
                lines_per_group: l.cols,
                items_per_line: l.tpl,
                split: l.split,
            },
            None => FftPasses::Global { radices: p.steps.iter().map(|s| s.0).collect() },
        };
        let axes = self
            .axes
            .iter()
            .map(|a| match &a.kind {
                AxisKind::Stockham(p) => FftAxisStrategy::Stockham { n: p.n, passes: passes(p) },
                AxisKind::Bluestein { chirp, passes: p, transposed, .. } => {
                    FftAxisStrategy::Bluestein { n: chirp.len(), m: p.n, passes: passes(p), transposed: *transposed }
                }
                AxisKind::FourStep { first, second, n1, n2, .. } => FftAxisStrategy::FourStep {
                    n1: *n1,
                    n2: *n2,
                    first: passes(first),
                    second: passes(second),
                    transpose: a.inner <= 1,
                },
            })
            .collect();
        FftStrategy { axes }
    }
}

/// The `fft_lines` kernels the `Step::Local`s need, one per distinct (shape, direction, four-step twiddles) —
/// the program cache shares the builds between plans — with each step's `kernel` set to its index; or the
/// smaller work-group limit a built kernel reports (the registers of one work-item limit the group size; the
/// planner stays well inside it, so a smaller limit means a device this planner does not know). The programs
/// build on threads of their own, together: NVIDIA's driver overlaps much of concurrent builds.
fn build_lines<T: Element>(
    app: &ClApp,
    axis_plans: &[AxisPlan<T>],
    steps: &mut [Step],
    index: IndexType,
) -> Result<std::result::Result<Vec<LinesKernel>, usize>> {
    let mut wanted: Vec<(LinesShape, LinesVariant)> = Vec::new();
    for step in steps.iter_mut() {
        let Step::Local { axis, part, inverse, kernel: slot, .. } = step else { continue };
        let axis_plan = axis_at(axis_plans, *axis)?;
        let (passes, _, _, _) = local_geometry(axis_plan, *part)?;
        let Some(shape) = passes.local.clone() else { continue };
        let bluestein = match &axis_plan.kind {
            AxisKind::Bluestein { chirp, .. } => Some(chirp.len()),
            _ => None,
        };
        let variant = LinesVariant { inverse: *inverse, twiddle_out: *part == LocalPart::First, bluestein };
        *slot = match wanted.iter().position(|(s, v)| *s == shape && *v == variant) {
            Some(k) => k,
            None => {
                wanted.push((shape, variant));
                wanted.len() - 1
            }
        };
    }
    let built: Vec<Result<LinesKernel>> = std::thread::scope(|scope| {
        let builds: Vec<_> = wanted
            .iter()
            .map(|(shape, variant)| scope.spawn(move || LinesKernel::build::<T>(app, shape, index, *variant)))
            .collect();
        builds.into_iter().map(|b| joined(b, "building an fft_lines program")).collect()
    });
    let mut lines = Vec::with_capacity(built.len());
    for line in built {
        let line = line?;
        let limit = line.kernel.max_work_group_size()?;
        if limit < line.shape.group_size() {
            return Ok(Err(limit));
        }
        lines.push(line);
    }
    Ok(Ok(lines))
}

/// What a build on a scoped thread returned; its panic as an error of `Fft`, saying `what` panicked.
fn joined<R>(build: std::thread::ScopedJoinHandle<'_, Result<R>>, what: &str) -> Result<R> {
    build.join().unwrap_or_else(|_| Err(Error::invalid("Fft", format!("{what} panicked"))))
}

/// The array in `slot` viewed with `dims` (for the transposes; the planner only routes them through a plain
/// input or output).
fn slot_view<T: Element>(
    input: &XData<T>,
    output: &XData<T>,
    scratch: &[XData<T>],
    slot: Slot,
    dims: &[usize],
) -> Result<XData<T>> {
    match slot {
        Slot::Input => input.reshape(dims),
        Slot::Output => output.reshape(dims),
        Slot::Scratch(k) => scratch_at(scratch, k)?.reshape(dims),
    }
}

/// Scratch array `k` of a plan.
pub(super) fn scratch_at<T: Element>(scratch: &[XData<T>], k: usize) -> Result<&XData<T>> {
    scratch
        .get(k)
        .ok_or_else(|| Error::invalid("Fft", format!("the plan names scratch array {k} of {}", scratch.len())))
}

/// The plan of transformed axis `axis` (as the steps number them).
pub(super) fn axis_at<T: Element>(axes: &[AxisPlan<T>], axis: usize) -> Result<&AxisPlan<T>> {
    axes.get(axis).ok_or_else(|| Error::invalid("Fft", format!("a step names axis {axis} of {} planned", axes.len())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::fft::{FftAlgorithm, FftParams};
    use num_complex::{Complex32, Complex64};

    #[test]
    fn long_rows_run_a_quick_shape_until_their_own_program_is_built() {
        // A ClApp of its own, so nothing of these programs is built yet (PoCL keeps no cliper disk cache).
        let app = ClApp::builder().use_env(true).program_cache(None).build().unwrap();
        let (rows, n) = (3usize, 8192usize);
        let data: Vec<Complex32> = (0..rows * n)
            .map(|k| Complex32::new(((k * 7919) % 1013) as f32 / 507.0 - 1.0, (k % 17) as f32 * 0.1))
            .collect();
        let x = XData::from_slice(&app, &[rows, n], &data).unwrap();
        let y = XData::<Complex32>::zeros(&app, &[rows, n]).unwrap();
        // The float64 reference, row by row.
        let mut want: Vec<Complex64> = data.iter().map(|v| Complex64::new(v.re.into(), v.im.into())).collect();
        let fft = rustfft::FftPlanner::<f64>::new().plan_fft_forward(n);
        want.chunks_mut(n).for_each(|row| fft.process(row));
        let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
        // c32 transforms of 8192 points: errors of a few ε·log2(n) relative to the largest output.
        let check = |what: &str| {
            let got = y.to_vec().unwrap();
            let worst = got
                .iter()
                .zip(&want)
                .map(|(g, w)| (Complex64::new(g.re.into(), g.im.into()) - w).norm())
                .fold(0.0, f64::max);
            assert!(worst <= 1e-5 * scale, "{what}: error {worst:e} against a largest output {scale:e}");
            got
        };
        let params = FftParams::forward().axes(&[1]).algorithm(FftAlgorithm::LocalMemory);
        let mut plan = Plan::new(&x, &y, &params).unwrap();
        let [line] = plan.lines.as_slice() else { panic!("{} fft_lines kernels", plan.lines.len()) };
        let planned = plan.axes.first().and_then(|a| match &a.kind {
            AxisKind::Stockham(p) => p.local.clone(),
            _ => None,
        });
        let best = planned.expect("8192-point rows in one fft_lines launch");
        let quick = best.quick.as_deref().expect("a quick shape for 8192-point c32 rows").clone();
        assert!(line.upgrading() && line.shape == quick, "{:?}", line.shape);
        assert!(quick.tpl > best.tpl && plan.kernels.is_none(), "{quick:?} {best:?}");
        // The quick shape's own kernel, launched with its shape (the better build may finish before a first launch).
        let variant = LinesVariant { inverse: false, twiddle_out: false, bluestein: None };
        let quick_only = LinesKernel::build::<Complex32>(&app, &quick, plan.index, variant).unwrap();
        let planned = std::mem::replace(plan.lines.first_mut().unwrap(), quick_only);
        plan.enqueue(&x, &y).unwrap();
        let first = check("the quick shape's kernel");
        *plan.lines.first_mut().unwrap() = planned;
        // Launches switch once the better build is done (PoCL: seconds).
        let started = std::time::Instant::now();
        while plan.lines.first().is_some_and(LinesKernel::upgrading) {
            assert!(started.elapsed().as_secs() < 600, "the better shape's program took 10 minutes");
            std::thread::sleep(std::time::Duration::from_millis(50));
            plan.enqueue(&x, &y).unwrap();
        }
        plan.enqueue(&x, &y).unwrap();
        assert_eq!(plan.lines.first().map(|l| l.shape.clone()), Some(best.clone()));
        let second = check("the planned shape's kernel");
        // The same butterflies and twiddles in both: each output rounds alike.
        let differ = first.iter().zip(&second).filter(|(a, b)| a != b).count();
        assert!(differ <= rows * n / 1000, "{differ} outputs differ between the two kernels");
        // A second plan finds the program built and takes it at once.
        let again = Plan::new(&x, &y, &params).unwrap();
        assert!(again.lines.iter().all(|l| !l.upgrading() && l.shape == best));
    }

    #[test]
    fn a_plan_dropped_while_its_planned_program_builds_waits_for_the_build() {
        // No compiler thread may outlive the plan that started it (one alive at exit can crash in the driver).
        let app = ClApp::builder().use_env(true).program_cache(None).build().unwrap();
        let x = XData::<Complex32>::zeros(&app, &[2, 8192]).unwrap();
        let y = XData::<Complex32>::zeros(&app, &[2, 8192]).unwrap();
        let params = FftParams::inverse().axes(&[1]).algorithm(FftAlgorithm::LocalMemory);
        let plan = Plan::new(&x, &y, &params).unwrap();
        let [line] = plan.lines.as_slice() else { panic!("{} fft_lines kernels", plan.lines.len()) };
        assert!(line.upgrading(), "a fresh ClApp has nothing built: {:?}", line.shape);
        let quick = line.shape.clone();
        drop(plan);
        // Built by the time the drop returned (a build still running holds its program's slot, and the next plan
        // would start on the quick shape again): the next plan launches the planned shape at once.
        let next = Plan::new(&x, &y, &params).unwrap();
        let [line] = next.lines.as_slice() else { panic!("{} fft_lines kernels", next.lines.len()) };
        assert!(!line.upgrading() && line.shape.tpl < quick.tpl, "{:?} after {quick:?}", line.shape);
    }
}
