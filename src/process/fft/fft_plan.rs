//! The plan of an [`Fft`](super::Fft) (made in `init`): every axis's [`AxisPlan`], the steps the schedule orders,
//! the scratch arrays, the strided copies in, out and between, and the kernels, built once.

use super::axis_plan::{AxisKind, AxisPlan, Passes, fft_program, local_geometry};
use super::fft_params::{FftDirection, FftParams, transformed_axes};
use super::fft_strategy::{FftAxisStrategy, FftPasses, FftStrategy};
use super::host_fft::RADICES;
use super::lines::{LinesShape, LinesVariant};
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
    pub(super) kernels: Kernels,
    pub(super) index: IndexType,
    pub(super) group: usize,
    /// The `fft_lines` kernels the `Step::Local`s name.
    pub(super) lines: Vec<Kernel>,
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
        let program = fft_program::<T>(app, index)?;
        let kernel = |name: &str| -> Result<Kernel> { Ok(program.kernel(name)?.owned_by(op)) };
        let mut pass_kernels = Vec::new();
        for r in RADICES {
            if steps.iter().any(|s| matches!(s, Step::Pass { radix, .. } if *radix == r)) {
                pass_kernels.push((r, kernel(&format!("fft_pass{r}"))?));
            }
        }
        let kernels = Kernels {
            passes: pass_kernels,
            pre: kernel("bluestein_pre")?,
            mul: kernel("bluestein_mul")?,
            post: kernel("bluestein_post")?,
        };
        let group = 256.min(app.device().max_work_group_size.max(1));
        let lines = match build_lines::<T>(app, &axis_plans, &mut steps, index)? {
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
/// planner stays well inside it, so a smaller limit means a device this planner does not know).
fn build_lines<T: Element>(
    app: &ClApp,
    axis_plans: &[AxisPlan<T>],
    steps: &mut [Step],
    index: IndexType,
) -> Result<std::result::Result<Vec<Kernel>, usize>> {
    let mut lines: Vec<(LinesShape, LinesVariant, Kernel)> = Vec::new();
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
        if let Some(k) = lines.iter().position(|(s, v, _)| *s == shape && *v == variant) {
            *slot = k;
            continue;
        }
        let built = shape.program::<T>(app, index, variant)?.kernel("fft_lines")?.owned_by("Fft");
        let limit = built.max_work_group_size()?;
        if limit < shape.group_size() {
            return Ok(Err(limit));
        }
        *slot = lines.len();
        lines.push((shape, variant, built));
    }
    Ok(Ok(lines.into_iter().map(|(_, _, k)| k).collect()))
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
