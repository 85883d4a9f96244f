//! The reduction planner behind [`super::NormN`] and [`super::Dot`]: many independent reductions of one length
//! (one per output element), tree-reduced in local memory with no atomics.
//!
//! Planning (in `init`):
//! - whole array: the axes of x (and y) are merged into one; when their strides do not allow it, the operands
//!   are first gathered into contiguous scratch arrays allocated here;
//! - along an axis: that axis is the reduction, the others (merged) index the outputs;
//! - then either `reduce_groups` (work-groups of WG work-items per reduction, in `chunks` grid-stride slices;
//!   with more than one chunk `reduce_partials` merges the partials in a second pass) or `reduce_lanes` (one
//!   work-item per reduction, for many short or strided reductions, where neighbouring work-items then read
//!   neighbouring elements).

use super::host_reduce;
use super::reduction::Reduction;
use crate::app::ffi::{self, Region};
use crate::app::{DeviceKind, Kernel};
use crate::data::XData;
use crate::data::{HostCommand, Launch};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::layout::CopyPlan;
use crate::process::planning::Batch3;
use crate::process::planning::{index_type_for, run_options, run_width};
use std::sync::Arc;

/// How a reduction runs, as `strategy()` of [`super::NormN`] and [`super::Dot`] reports it.
///
/// ```
/// use cliper::{ClApp, NormN, NormParams, Process, ReduceKernel, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[64, 1000])?;
/// let out = XData::zeros(&app, &[64])?;
/// let mut rows = NormN::new(&x, &out, NormParams::default().along(1));
/// rows.init()?;
/// let s = rows.strategy().unwrap();
/// assert!(!s.gathered && s.kernel != ReduceKernel::Nothing);
/// println!("{s}"); // e.g. "groups (256 work-items)"
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceStrategy {
    /// Whether strided operands are first copied into contiguous scratch (when their strides do not merge).
    pub gathered: bool,
    /// The kernels that reduce.
    pub kernel: ReduceKernel,
    /// Work-items per group.
    pub work_group: usize,
}

/// The reduction kernels a [`ReduceStrategy`] runs.
///
/// ```
/// use cliper::{NormN, NormParams, Process, ReduceKernel, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[1000, 3])?; // many short reductions along axis 1
/// // (kernels_only: a CPU device would otherwise sum on the host, ReduceKernel::Host)
/// let params = NormParams::default().along(1).kernels_only(true);
/// let mut n = NormN::new(&x, &XData::zeros(&app, &[1000])?, params);
/// n.init()?;
/// assert_eq!(n.strategy().unwrap().kernel, ReduceKernel::Lanes);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceKernel {
    /// Nothing to reduce (no outputs).
    Nothing,
    /// `reduce_groups` alone: each reduction by one work-group.
    Groups,
    /// `reduce_groups` in `chunks` work-groups per reduction, then `reduce_partials` merging their partials.
    GroupsAndPartials {
        /// Work-groups per reduction.
        chunks: usize,
    },
    /// `reduce_lanes`: one work-item per reduction (many short or strided reductions).
    Lanes,
    /// No kernel: loops on the host in float64 over the mapped buffers of a CPU device, where device memory is
    /// host memory (PoCL's kernels reach a tenth of numpy's speed on these memory-bound sums).
    Host,
}

impl std::fmt::Display for ReduceStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.gathered {
            write!(f, "gather+")?;
        }
        match self.kernel {
            ReduceKernel::Nothing => write!(f, "none"),
            ReduceKernel::Groups => write!(f, "groups ({} work-items)", self.work_group),
            ReduceKernel::GroupsAndPartials { chunks } => {
                write!(f, "groups+partials ({chunks} groups per reduction of {} work-items)", self.work_group)
            }
            ReduceKernel::Lanes => write!(f, "lanes"),
            ReduceKernel::Host => write!(f, "host (float64 loops in the mapped buffers)"),
        }
    }
}

/// A gather of a strided operand into contiguous scratch, run before the reduction.
struct Gather<T: Element> {
    plan: CopyPlan,
    from: XData<T>,
    to: XData<T>,
}

enum Step<O: Element> {
    Nothing,
    Groups {
        kernel: Kernel,
        chunks: usize,
        finish: Option<(Kernel, XData<O>)>,
    },
    Lanes {
        kernel: Kernel,
    },
    /// On the host: per reduction, its starts in x, y and the output relative to the mapped regions, which are
    /// `[lo, hi)` of x, y and the output.
    Host {
        starts: Vec<[usize; 3]>,
        regions: [(usize, usize); 3],
    },
}

/// A planned reduction between fixed arrays: built in `init`, enqueued by `launch`.
pub(crate) struct ReducePlan<T: Element, O: Element> {
    op: &'static str,
    reduction: Reduction,
    gathers: Vec<Gather<T>>,
    /// The arrays the kernels read (the operands, or their gathered copies); y is x again for norms.
    x: XData<T>,
    y: XData<T>,
    len: usize,
    stride: [usize; 2],
    batch: Batch3,
    outputs: usize,
    index: IndexType,
    wg: usize,
    step: Step<O>,
}

/// The reduced axis of a plan along an axis: its index, its extent, and the strides of x and y along it.
type Along = Option<(usize, usize, [usize; 2])>;

/// How the reductions are spread: `lanes` (one work-item per reduction, for many short or strided ones) or
/// `chunks` work-groups of `wg` work-items per reduction, enough to fill about `target_groups` groups with at least
/// 8 elements per work-item. Pure, so the choice is unit-tested.
fn schedule(outputs: usize, len: usize, stride: usize, wg: usize, target_groups: usize) -> (bool, usize) {
    let lanes = outputs >= 256 && (stride != 1 || len < 32);
    let chunks =
        if lanes || outputs == 0 { 1 } else { target_groups.div_ceil(outputs).min(len.div_ceil(wg * 8)).max(1) };
    (lanes, chunks)
}

impl<T: Element, O: Element> ReducePlan<T, O> {
    /// Plans `out = reduce(x[, y])` over all of x (`axis` None; `out` has shape `[]`) or along `axis` (`out` has
    /// x's shape without that axis).
    pub(crate) fn new(
        op: &'static str,
        reduction: Reduction,
        x: &XData<T>,
        y: Option<&XData<T>>,
        axis: Option<usize>,
        out: &XData<O>,
        host: bool,
    ) -> Result<ReducePlan<T, O>> {
        let along = check(op, x, y, axis, out)?;
        let app = out.app();
        let y_arr = y.cloned().unwrap_or_else(|| x.clone());
        let mut gathers = Vec::new();
        let (xk, yk, len, stride, batch) = match along {
            None => {
                let (mut xk, mut yk) = (x.clone(), y_arr);
                let merged = match merge_all(&xk, &yk) {
                    Some(m) => m,
                    None => {
                        for operand in [&mut xk, &mut yk] {
                            if !operand.is_contiguous() {
                                let to = XData::uninit(app, op, operand.shape())?;
                                let plan = CopyPlan::new(op, operand, &to, false, None)?;
                                gathers.push(Gather { plan, from: operand.clone(), to: to.clone() });
                                *operand = to;
                            }
                        }
                        merge_all(&xk, &yk).unwrap_or((xk.len(), [1, 1]))
                    }
                };
                (xk, yk, merged.0, merged.1, Batch3::default())
            }
            Some((k, n, stride)) => {
                let (sx, sy) = (without_axis(x.strides(), k), without_axis(y_arr.strides(), k));
                let batch = Batch3::new(op, out.shape(), [&sx, &sy, out.strides()])?;
                (x.clone(), y_arr, n, stride, batch)
            }
        };
        let outputs = out.len();
        let info = app.device();
        let wg = [256, info.max_work_group_size].into_iter().min().unwrap_or(1).max(1);
        let wg = 1usize << (usize::BITS - 1 - wg.leading_zeros());
        // Enough work-groups to fill the device: GPUs hide memory latency with many. PoCL runs a group's items
        // one after another and spreads groups over its threads; there 128 per core beat 2 per core 4× for a
        // dot product of 2^22 f32 (12.3 → 3.4 ms, 2 Xeon cores).
        let target_groups = info.compute_units as usize * if info.kind == DeviceKind::Cpu { 128 } else { 8 };
        let (lanes, chunks) = schedule(outputs, len, stride[0], wg, target_groups);
        let partials = (outputs * chunks * reduction.partial_width()) as u64;
        let index = index_type_for(&[xk.layout(), yk.layout(), out.layout()], &[partials]);
        let mut options = format!(
            "{} -DIDX={} -DWG={wg} -DLANES={} {}",
            T::build_options(),
            index.cl_type(),
            u8::from(lanes),
            reduction.options()
        );
        let vw = if lanes { 1 } else { vector_width::<T>(&xk, &yk, stride, &batch) };
        if vw > 1 {
            options += &run_options::<T>();
        }
        let host_computes = match reduction {
            Reduction::Norm { p } => host_reduce::host_norm(p),
            Reduction::Dot { .. } => true,
        };
        let on_host = host
            && host_computes
            && info.kind == DeviceKind::Cpu
            && len > 0
            && !Arc::ptr_eq(out.storage(), xk.storage())
            && !Arc::ptr_eq(out.storage(), yk.storage());
        let step = if outputs == 0 {
            Step::Nothing
        } else if on_host {
            host_step(&batch, [xk.offset(), yk.offset(), out.offset()], len, stride)
        } else {
            // Only the kernels this reduction launches are compiled.
            let used: &[&str] = match (lanes, chunks > 1) {
                (true, _) => &["reduce_lanes"],
                (false, true) => &["reduce_groups", "reduce_partials"],
                (false, false) => &["reduce_groups"],
            };
            let source = kernels::only_kernels(&kernels::with_common(kernels::REDUCE), used);
            let program = app.build_program("reduce.cl", &source, &options)?;
            if lanes {
                Step::Lanes { kernel: program.kernel("reduce_lanes")?.owned_by(op) }
            } else {
                let finish = if chunks > 1 {
                    let partials = XData::uninit(app, op, &[outputs * chunks * reduction.partial_width()])?;
                    Some((program.kernel("reduce_partials")?.owned_by(op), partials))
                } else {
                    None
                };
                Step::Groups { kernel: program.kernel("reduce_groups")?.owned_by(op), chunks, finish }
            }
        };
        Ok(ReducePlan { op, reduction, gathers, x: xk, y: yk, len, stride, batch, outputs, index, wg, step })
    }

    /// How the reduction runs.
    pub(crate) fn strategy(&self) -> ReduceStrategy {
        let kernel = match &self.step {
            Step::Nothing => ReduceKernel::Nothing,
            Step::Groups { finish: None, .. } => ReduceKernel::Groups,
            Step::Groups { chunks, finish: Some(_), .. } => ReduceKernel::GroupsAndPartials { chunks: *chunks },
            Step::Lanes { .. } => ReduceKernel::Lanes,
            Step::Host { .. } => ReduceKernel::Host,
        };
        ReduceStrategy { gathered: !self.gathers.is_empty(), kernel, work_group: self.wg }
    }

    /// Enqueues the gathers (if any) and the reduction kernels.
    pub(crate) fn launch(&mut self, out: &XData<O>) -> Result<()> {
        for g in &mut self.gathers {
            g.plan.launch(self.op, &g.from, &g.to)?;
        }
        let (idx, b) = (self.index, self.batch);
        let (p, ip) = match self.reduction {
            Reduction::Norm { p } if p.is_finite() => (p, p.min(i32::MAX as f64) as i32),
            _ => (0.0, 0),
        };
        let p = T::Real::from_c64(p.into());
        let element = std::mem::size_of::<T>() as u64;
        let arrays_read = if matches!(self.reduction, Reduction::Dot { .. }) { 2 } else { 1 };
        let n = (self.len * self.outputs) as u64;
        let bytes = n * element * arrays_read;
        let flops = match self.reduction {
            Reduction::Norm { .. } => 3 * n,
            Reduction::Dot { .. } => n * if T::IS_COMPLEX { 8 } else { 2 },
        };
        let (x, y) = (&self.x, &self.y);
        let (len, stride) = (self.len as u64, self.stride);
        match &mut self.step {
            Step::Nothing => Ok(()),
            Step::Host { starts, regions } => {
                let [(xl, xh), (yl, yh), (ol, oh)] = *regions;
                let reads = [
                    Region { buffer: x.storage().buffer(), lo: xl, hi: xh },
                    Region { buffer: y.storage().buffer(), lo: yl, hi: yh },
                ];
                let write = Region { buffer: out.storage().buffer(), lo: ol, hi: oh };
                let (reduction, len, starts) = (self.reduction, self.len, &*starts);
                HostCommand::new::<T, O>(self.op, "host_reduce", &[x, y], &[out])?.work(bytes, flops).run(|queue| {
                    ffi::with_mapped::<T, O, ()>(queue, &reads, &write, |operands, out| {
                        let (xs, ys) = (operands.first().copied().unwrap_or_default(), operands.get(1).copied());
                        host_reduce::reduce(reduction, [xs, ys.unwrap_or_default()], len, stride, starts, out);
                    })
                    .map(|((), event)| event)
                })
            }
            Step::Lanes { kernel } => operands(kernel, x, y, idx, stride, len, b)
                .index("outputs", idx, self.outputs as u64)
                .output("out", out)
                .index("out_off", idx, out.offset() as u64)
                .scalar("p", p)
                .scalar("ip", ip)
                .global(&[self.outputs.div_ceil(64) * 64])
                .local(&[64])
                .work(bytes, flops)
                .enqueue(),
            Step::Groups { kernel, chunks, finish } => {
                let first = operands(kernel, x, y, idx, stride, len, b);
                // Without a second pass the partials argument is unused; the output stands in for it.
                let first = match finish {
                    Some((_, partials)) => first.output("partials", partials),
                    None => first.output("partials", out),
                };
                first
                    .output("out", out)
                    .index("out_off", idx, out.offset() as u64)
                    .scalar("finalize", u32::from(finish.is_none()))
                    .scalar("p", p)
                    .scalar("ip", ip)
                    .global(&[*chunks * self.wg, self.outputs])
                    .local(&[self.wg, 1])
                    .work(bytes, flops)
                    .enqueue()?;
                if let Some((k, partials)) = finish {
                    let partial_bytes = (partials.len() + self.outputs) as u64 * std::mem::size_of::<O>() as u64;
                    k.launch()
                        .input("partials", partials)
                        .index("chunks", idx, *chunks as u64)
                        .scalar("nd", b.axes)
                        .scalar("shape", b.shape)
                        .scalar("batch_out", b.strides[2])
                        .output("out", out)
                        .index("out_off", idx, out.offset() as u64)
                        .scalar("p", p)
                        .scalar("ip", ip)
                        .global(&[self.outputs * self.wg])
                        .local(&[self.wg])
                        .work(partial_bytes, 0)
                        .enqueue()?;
                }
                Ok(())
            }
        }
    }
}

/// The host's plan: every reduction's starts relative to the smallest region of x, y and the output that holds
/// them all.
fn host_step<O: Element>(batch: &Batch3, origin: [usize; 3], len: usize, stride: [usize; 2]) -> Step<O> {
    let absolute = batch.offsets(origin);
    let reach = [(len - 1) * stride[0] + 1, (len - 1) * stride[1] + 1, 1];
    let mut regions = [(usize::MAX, 0); 3];
    for starts in &absolute {
        for ((region, &start), &reach) in regions.iter_mut().zip(starts).zip(&reach) {
            *region = (region.0.min(start), region.1.max(start + reach));
        }
    }
    let starts = absolute
        .iter()
        .map(|s| {
            let mut relative = *s;
            for (r, region) in relative.iter_mut().zip(&regions) {
                *r -= region.0;
            }
            relative
        })
        .collect();
    Step::Host { starts, regions }
}

/// The leading arguments every reduction kernel but `reduce_partials` takes: the operands, the reduction's
/// length and strides, and the batch axes that index the outputs.
fn operands<'k, T: Element>(
    kernel: &'k mut Kernel,
    x: &XData<T>,
    y: &XData<T>,
    idx: IndexType,
    stride: [usize; 2],
    len: u64,
    b: Batch3,
) -> Launch<'k> {
    kernel
        .launch()
        .input("x", x)
        .index("x_off", idx, x.offset() as u64)
        .index("sx", idx, stride[0] as u64)
        .input("y", y)
        .index("y_off", idx, y.offset() as u64)
        .index("sy", idx, stride[1] as u64)
        .index("len", idx, len)
        .scalar("nd", b.axes)
        .scalar("shape", b.shape)
        .scalar("batch_x", b.strides[0])
        .scalar("batch_y", b.strides[1])
        .scalar("batch_out", b.strides[2])
}

/// The checks on the operands and the output: one device, one shape, an existing axis, the output's shape, no
/// overlap. Returns the reduced axis, if any.
fn check<T: Element, O: Element>(
    op: &str,
    x: &XData<T>,
    y: Option<&XData<T>>,
    axis: Option<usize>,
    out: &XData<O>,
) -> Result<Along> {
    if !x.app().same_as(out.app()) || y.is_some_and(|y| !y.app().same_as(out.app())) {
        return Err(Error::invalid(op, "the operands and the output must belong to the same ClApp (device)"));
    }
    if let Some(y) = y
        && y.shape() != x.shape()
    {
        return Err(Error::invalid(
            op,
            format!("x has shape {:?} but y has shape {:?}; they must be equal", x.shape(), y.shape()),
        ));
    }
    let y_strides = y.unwrap_or(x).strides();
    let along = match axis {
        None => None,
        Some(k) => match (x.shape().get(k), x.strides().get(k), y_strides.get(k)) {
            (Some(&n), Some(&sx), Some(&sy)) => Some((k, n, [sx, sy])),
            _ => return Err(Error::axis(op, k as isize, x.shape())),
        },
    };
    let expected: Vec<usize> = match along {
        None => vec![],
        Some((k, ..)) => without_axis(x.shape(), k),
    };
    if out.shape() != expected.as_slice() {
        let why = match axis {
            None => format!("a single value for all of x, shape {:?}", x.shape()),
            Some(k) => format!("x's shape {:?} without axis {k}", x.shape()),
        };
        return Err(Error::shape_because(op, &expected, out.shape(), why));
    }
    if out.overlaps(x) || y.is_some_and(|y| out.overlaps(y)) {
        return Err(Error::invalid(op, "the output overlaps an operand in one buffer"));
    }
    Ok(along)
}

/// `v` without its entry `k`.
fn without_axis(v: &[usize], k: usize) -> Vec<usize> {
    v.iter().enumerate().filter(|&(i, _)| i != k).map(|(_, &e)| e).collect()
}

/// The shape a reduction of `shape` gives: `[]` over everything, `shape` without `axis` along it (an error
/// naming the shape when the axis does not exist).
pub(super) fn reduced_shape(op: &str, shape: &[usize], axis: Option<usize>) -> Result<Vec<usize>> {
    match axis {
        None => Ok(Vec::new()),
        Some(k) if k < shape.len() => Ok(without_axis(shape, k)),
        Some(k) => Err(Error::axis(op, k as isize, shape)),
    }
}

/// How many elements `reduce_groups` reads at once (16 bytes), or 1: wider reads need unit strides and every
/// reduction's start in both operands on a 16-byte boundary (buffers themselves are aligned far more).
fn vector_width<T: Element>(x: &XData<T>, y: &XData<T>, stride: [usize; 2], batch: &Batch3) -> usize {
    let vw = run_width::<T>();
    let aligned = |v: usize| v.is_multiple_of(vw);
    let starts_aligned = aligned(x.offset())
        && aligned(y.offset())
        && batch.strides[0]
            .iter()
            .zip(&batch.strides[1])
            .take(batch.axes as usize)
            .all(|(&sx, &sy)| aligned(sx as usize) && aligned(sy as usize));
    if vw > 1 && stride == [1, 1] && starts_aligned { vw } else { 1 }
}

/// The length and the (x, y) strides of one axis covering all elements of both arrays in the same order, when
/// their layouts allow it (any order of the axes will do for a whole-array reduction).
fn merge_all<T: Element>(x: &XData<T>, y: &XData<T>) -> Option<(usize, [usize; 2])> {
    // No elements: nothing to read, whatever the other extents (axes of extent ≤ 1 are skipped below, so
    // [0, 3] would otherwise pass as 3 elements).
    if x.is_empty() {
        return Some((0, [1, 1]));
    }
    let mut axes: Vec<(usize, usize, usize)> = x
        .shape()
        .iter()
        .zip(x.strides())
        .zip(y.strides())
        .filter(|&((&n, _), _)| n > 1)
        .map(|((&n, &sx), &sy)| (n, sx, sy))
        .collect();
    axes.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)));
    let mut merged: Option<(usize, usize, usize)> = None;
    for (n, sx, sy) in axes {
        merged = match merged {
            None => Some((n, sx, sy)),
            Some((m, px, py)) if px == n * sx && py == n * sy => Some((m * n, sx, sy)),
            Some(_) => return None,
        };
    }
    let (n, sx, sy) = merged.unwrap_or((x.len(), 1, 1));
    Some((n, [sx, sy]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_short_or_strided_reductions_take_lanes() {
        assert_eq!(schedule(1000, 3, 1, 256, 1056), (true, 1)); // short rows
        assert_eq!(schedule(1000, 5000, 7, 256, 1056), (true, 1)); // strided rows
        assert!(!schedule(100, 3, 1, 256, 1056).0); // too few outputs to fill the device one per work-item
    }

    #[test]
    fn long_reductions_split_into_chunks_with_a_partials_pass() {
        // One reduction of 2^24 over a device worth 1056 groups: 1056 chunks of ≥ 8 elements per work-item.
        assert_eq!(schedule(1, 1 << 24, 1, 256, 1056), (false, 1056));
        // Short ones are never split below 8 elements per work-item.
        assert_eq!(schedule(1, 4096, 1, 256, 1056), (false, 2));
        assert_eq!(schedule(0, 100, 1, 256, 1056), (false, 1));
    }
}
