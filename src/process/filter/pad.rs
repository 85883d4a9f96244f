//! [`Pad`]: a larger copy of an array with its borders filled by a [`Border`] rule (`numpy.pad`).

use super::border::Border;
use super::host_pad::HostPad;
use crate::app::Kernel;
use crate::data::{HostRegions, XData};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{index_type_for, run_options, run_width};
use crate::process::{Prepared, Process};

/// Most axes a padded array may have.
const MAX_AXES: usize = 8;
/// Work-items per group (fewer where the device allows fewer): consecutive elements of one output row.
const WG: usize = 256;
/// Runs of output elements per work-item (`WG` runs apart along a row): the per-row index arithmetic is done
/// once for them and their loads are in flight together.
const EPT: usize = 4;

/// The parameters of a [`Pad`]: the widths, one `(before, after)` pair per axis or one pair for every axis,
/// and the border rule, by default numpy.pad's `constant` with 0 ([`Border::ZERO`]).
///
/// ```
/// use cliper::{Border, PadParams};
/// let p = PadParams::new(&[(8, 8)]).border(Border::Reflect); // numpy.pad(x, 8, mode='symmetric')
/// assert_eq!(PadParams::new(&[(1, 2)]), PadParams::new(&[(1, 2)]).border(Border::ZERO));
/// # let _ = p;
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PadParams {
    widths: Vec<(usize, usize)>,
    border: Border,
    kernels_only: bool,
}

impl PadParams {
    /// Pads by `widths` with zeros.
    pub fn new(widths: &[(usize, usize)]) -> PadParams {
        PadParams { widths: widths.to_vec(), border: Border::ZERO, kernels_only: false }
    }

    /// How the new elements are filled.
    pub fn border(mut self, border: Border) -> PadParams {
        self.border = border;
        self
    }

    /// Keeps the OpenCL kernel on a CPU device, where the planner otherwise pads on the host
    /// ([`PadStrategy::host`]): for comparisons, and the kernel's own tests.
    ///
    /// ```
    /// use cliper::{DeviceKind, Pad, PadParams, Process, XData};
    /// let app = cliper::ClApp::new()?;
    /// let x = XData::from_slice(&app, &[3], &[1.0f32, 2.0, 3.0])?;
    /// let (a, b) = (XData::zeros(&app, &[5])?, XData::zeros(&app, &[5])?);
    /// let mut planned = Pad::new(&x, &a, PadParams::new(&[(1, 1)]));
    /// let mut kernel = Pad::new(&x, &b, PadParams::new(&[(1, 1)]).kernels_only(true));
    /// planned.run()?;
    /// kernel.run()?;
    /// assert_eq!(planned.strategy().unwrap().host, app.device().kind == DeviceKind::Cpu);
    /// assert!(!kernel.strategy().unwrap().host);
    /// assert_eq!(a.to_vec()?, b.to_vec()?);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn kernels_only(mut self, on: bool) -> PadParams {
        self.kernels_only = on;
        self
    }
}

/// How a [`Pad`] runs: `pad` over the output as rows along its last axis, one group per block of
/// `work_group × 4` runs of `run` elements.
///
/// ```
/// use cliper::{Pad, PadParams, Process, XData};
/// let app = cliper::ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[30, 40])?;
/// let mut pad = Pad::new(&x, &XData::zeros(&app, &[32, 42])?, PadParams::new(&[(1, 1)]));
/// pad.init()?;
/// assert_eq!(pad.strategy().unwrap().rows, 32);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PadStrategy {
    /// Rows of the output (every axis but the last, merged).
    pub rows: u64,
    /// Work-groups of the launch (a group per block up to a cap; each loops over the rest).
    pub groups: usize,
    /// Work-items per group.
    pub work_group: usize,
    /// Elements per 16-byte run (1 when rows are not aligned).
    pub run: usize,
    /// On the host instead (CPU devices, contiguous outputs): the host's threads write the rows in the mapped
    /// buffers; `groups`, `work_group` and `run` are 0 then.
    pub host: bool,
}

impl std::fmt::Display for PadStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host {
            return write!(f, "host: {} rows over the host's threads", self.rows);
        }
        write!(f, "pad over {} rows, {}×{} work-items, runs of {}", self.rows, self.groups, self.work_group, self.run)
    }
}

/// Writes `input` extended by `(before, after)` elements along each axis into `output`, filling the new
/// elements by a [`Border`] rule — `numpy.pad(input, widths, mode)` exactly, widths larger than the axis
/// included. Any rank up to 8; either array may be a strided view. The inverse, a crop, is a view:
/// [`XData::crop`].
///
/// ```
/// use cliper::{Border, ClApp, Pad, PadParams, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[4], &[1.0f32, 2.0, 3.0, 4.0])?;
/// let pad = |w: (usize, usize), border| Pad::apply(&x, PadParams::new(&[w]).border(border));
/// assert_eq!(pad((3, 2), Border::Mirror)?.to_vec()?, [4.0, 3.0, 2.0, 1.0, 2.0, 3.0, 4.0, 3.0, 2.0]);
/// assert_eq!(pad((2, 2), Border::Reflect)?.to_vec()?, [2.0, 1.0, 1.0, 2.0, 3.0, 4.0, 4.0, 3.0]);
/// assert_eq!(pad((1, 1), Border::Constant(9.0))?.to_vec()?, [9.0, 1.0, 2.0, 3.0, 4.0, 9.0]);
/// // 2-D: one (before, after) pair per axis, or one pair for every axis.
/// let img = XData::from_slice(&app, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
/// let padded = Pad::apply(&img, PadParams::new(&[(1, 1)]).border(Border::Wrap))?;
/// assert_eq!(padded.shape(), &[4, 4]);
/// assert_eq!(padded.crop(&[(1, 1)])?.to_vec()?, img.to_vec()?);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Pad<T: Element> {
    input: XData<T>,
    output: XData<T>,
    params: PadParams,
    plan: Prepared<Plan>,
}

struct Plan {
    kernel: Option<Kernel>,
    /// On the host: the pad, and the regions it maps.
    host: Option<(HostPad, HostRegions)>,
    index: IndexType,
    rows: RowAxes,
    last: [i32; 3],
    steps: [u64; 2],
    x_blocks: u64,
    groups: u64,
    launch_groups: usize,
    wg: usize,
    run: usize,
}

#[derive(Default)]
struct RowAxes {
    nd: u32,
    out_shape: [u64; 8],
    in_shape: [u64; 8],
    before: [u64; 8],
    src: [u64; 8],
    dst: [u64; 8],
}

impl<T: Element> Pad<T> {
    /// A pad of `input` into `output` as `params` say.
    pub fn new(input: &XData<T>, output: &XData<T>, params: PadParams) -> Pad<T> {
        Pad { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the padded output, pads into it once and returns it.
    pub fn apply(input: &XData<T>, params: PadParams) -> Result<XData<T>> {
        let output = XData::uninit(input.app(), "Pad", &Self::output_shape(input.shape(), &params)?)?;
        Pad::new(input, &output, params).run()?;
        Ok(output)
    }

    /// The padded shape: `shape[k] + before[k] + after[k]`.
    ///
    /// ```
    /// use cliper::{Pad, PadParams};
    /// assert_eq!(Pad::<f32>::output_shape(&[5, 7], &PadParams::new(&[(1, 2), (0, 3)]))?, vec![8, 10]);
    /// assert_eq!(Pad::<f32>::output_shape(&[5, 7], &PadParams::new(&[(1, 1)]))?, vec![7, 9]);
    /// assert!(Pad::<f32>::output_shape(&[5, 7], &PadParams::new(&[(1, 1), (1, 1), (1, 1)])).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &PadParams) -> Result<Vec<usize>> {
        padded_shape(shape, &expand_widths(shape, &params.widths)?)
    }

    /// How `init` planned the pad; `None` before `init`.
    pub fn strategy(&self) -> Option<PadStrategy> {
        self.plan.as_ref().map(|p| PadStrategy {
            rows: p.rows.out_shape.iter().take(p.rows.nd as usize).product(),
            groups: p.launch_groups,
            work_group: p.wg,
            run: p.run,
            host: p.host.is_some(),
        })
    }
}

impl<T: Element> Pad<T> {
    /// The host pad, when it applies: a CPU device, not `kernels_only`, a contiguous non-empty output in a buffer
    /// of its own, a non-empty input.
    fn host_plan(&self, expected: &[usize], widths: &[(usize, usize)]) -> Option<(HostPad, HostRegions)> {
        let (input, output) = (&self.input, &self.output);
        let applies = !self.params.kernels_only && !input.is_empty();
        let regions = HostRegions::for_pass(input, output).filter(|_| applies)?;
        let host = HostPad {
            in_base: regions.input_start(input),
            in_shape: input.shape().to_vec(),
            in_strides: input.strides().to_vec(),
            out_shape: expected.to_vec(),
            widths: widths.to_vec(),
            border: self.params.border,
        };
        Some((host, regions))
    }

    /// The checks on the arrays once the padded shape `expected` is known.
    fn check(&self, expected: &[usize], widths: &[(usize, usize)]) -> Result<()> {
        let (op, shape) = ("Pad", self.input.shape());
        if self.output.shape() != expected {
            let why = format!("input {shape:?} padded by {widths:?}");
            return Err(Error::shape_because(op, expected, self.output.shape(), why));
        }
        if !self.input.app().same_as(self.output.app()) {
            return Err(Error::invalid(op, "the input and the output must belong to the same ClApp (device)"));
        }
        if self.output.overlaps(&self.input) {
            return Err(Error::invalid(op, "the output overlaps the input in one buffer"));
        }
        if expected.iter().any(|&n| n > i32::MAX as usize) {
            return Err(Error::Unsupported {
                what: format!("{op}: an axis of the padded shape {expected:?} exceeds 2³¹"),
            });
        }
        let border = self.params.border;
        if !matches!(border, Border::Constant(_))
            && let Some(k) = shape.iter().zip(widths).position(|(&n, &w)| n == 0 && w != (0, 0))
        {
            return Err(Error::invalid(
                op,
                format!(
                    "axis {k} of the input (shape {shape:?}) is empty, so {border:?} has nothing to extend it with; \
                     only Border::Constant can pad an empty axis"
                ),
            ));
        }
        Ok(())
    }
}

/// One axis of a pad: extents of the output and the input, the elements added before, and the strides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PadAxis {
    out: usize,
    input: usize,
    before: usize,
    src: usize,
    dst: usize,
}

/// The axis the kernel walks along rows (the last one longer than 1) and the others as row axes (at most 7).
/// Axes of output extent 1 read element 0 on both sides and are dropped; with none left (a rank-0 array among
/// them) one row of one element remains. Pure, so it is unit-tested.
fn row_axes(
    out: &[usize],
    input: &[usize],
    widths: &[(usize, usize)],
    src: &[usize],
    dst: &[usize],
) -> Result<(PadAxis, RowAxes)> {
    let axes: Vec<PadAxis> = out
        .iter()
        .zip(input)
        .zip(widths)
        .zip(src)
        .zip(dst)
        .map(|((((&out, &input), &(before, _)), &src), &dst)| PadAxis { out, input, before, src, dst })
        .filter(|a| a.out != 1)
        .collect();
    if axes.len() > MAX_AXES {
        return Err(Error::Unsupported {
            what: format!("Pad: shape {out:?} has {} axes longer than 1; at most {MAX_AXES}", axes.len()),
        });
    }
    let one = PadAxis { out: 1, input: 1, before: 0, src: 1, dst: 1 };
    let (last, row_axes) = axes.split_last().map_or((one, &[][..]), |(l, r)| (*l, r));
    // One value per row axis; the slots past `nd` hold 0.
    let column = |pick: fn(&PadAxis) -> usize| -> [u64; 8] {
        std::array::from_fn(|slot| row_axes.get(slot).map_or(0, |a| pick(a) as u64))
    };
    let rows = RowAxes {
        nd: row_axes.len() as u32,
        out_shape: column(|a| a.out),
        in_shape: column(|a| a.input),
        before: column(|a| a.before),
        src: column(|a| a.src),
        dst: column(|a| a.dst),
    };
    Ok((last, rows))
}

/// `shape` grown by one `(before, after)` pair per axis, or an error when an extent overflows.
fn padded_shape(shape: &[usize], widths: &[(usize, usize)]) -> Result<Vec<usize>> {
    shape
        .iter()
        .zip(widths)
        .map(|(&n, &(b, a))| {
            n.checked_add(b).and_then(|v| v.checked_add(a)).ok_or_else(|| {
                Error::invalid("Pad", format!("widths {widths:?} overflow the padded extent of shape {shape:?}"))
            })
        })
        .collect()
}

/// One `(before, after)` pair per axis from a list with one pair per axis or one pair for all.
fn expand_widths(shape: &[usize], widths: &[(usize, usize)]) -> Result<Vec<(usize, usize)>> {
    match widths {
        _ if widths.len() == shape.len() => Ok(widths.to_vec()),
        &[pair] => Ok(vec![pair; shape.len()]),
        _ => Err(Error::invalid(
            "Pad",
            format!(
                "{} (before, after) width pairs for an array of shape {shape:?} ({} axes); give one per axis or one \
                 for all",
                widths.len(),
                shape.len()
            ),
        )),
    }
}

impl<T: Element> Process for Pad<T> {
    fn name(&self) -> &str {
        "Pad"
    }

    fn init(&mut self) -> Result<()> {
        let op = "Pad";
        let (shape, widths) = (self.input.shape(), expand_widths(self.input.shape(), &self.params.widths)?);
        let expected = padded_shape(shape, &widths)?;
        self.check(&expected, &widths)?;
        let (last, rows) = row_axes(&expected, shape, &widths, self.input.strides(), self.output.strides())?;
        let row_count: u64 = rows.out_shape.iter().take(rows.nd as usize).product();
        let info = self.output.app().device();
        if let Some(host) = self.host_plan(&expected, &widths) {
            let rows = RowAxes { nd: 1, out_shape: [row_count, 0, 0, 0, 0, 0, 0, 0], ..RowAxes::default() };
            self.plan.set(Plan {
                kernel: None,
                host: Some(host),
                index: IndexType::U32,
                rows,
                last: [0; 3],
                steps: [0; 2],
                x_blocks: 0,
                groups: 0,
                launch_groups: 0,
                wg: 0,
                run: 0,
            });
            return Ok(());
        }
        let wg = WG.min(info.max_work_group_size.max(1));
        let wg = 1usize << (usize::BITS - 1 - wg.leading_zeros());
        // Runs of 16 bytes when every output row starts on such a boundary with unit stride.
        let vw = run_width::<T>();
        let aligned = |v: usize| v.is_multiple_of(vw);
        let vw = if last.dst == 1
            && aligned(self.output.offset())
            && rows.dst.iter().take(rows.nd as usize).all(|&d| aligned(d as usize))
        {
            vw
        } else {
            1
        };
        let x_blocks = last.out.div_ceil(wg * EPT * vw) as u64;
        let groups = row_count * x_blocks;
        let app = self.output.app();
        // A group per block up to a large cap, on CPUs too: PoCL padded 2048² in 25 ms that way against 41 ms with
        // a few looping groups per core.
        let cap = 1 << 22;
        let index = index_type_for(&[self.input.layout(), self.output.layout()], &[groups]);
        let kernel = if self.output.is_empty() {
            None
        } else {
            let mut options = format!(
                "{} -DIDX={} {} -DWG={wg} -DEPT={EPT}",
                T::build_options(),
                index.cl_type(),
                self.params.border.build_option()
            );
            if vw > 1 {
                options += &run_options::<T>();
            }
            let program = app.build_program("filter_pad.cl", &kernels::with_common(kernels::FILTER_PAD), &options)?;
            Some(program.kernel("pad")?.owned_by(op))
        };
        self.plan.set(Plan {
            kernel,
            host: None,
            index,
            rows,
            last: [last.input as i32, last.out as i32, last.before as i32],
            steps: [last.src as u64, last.dst as u64],
            x_blocks,
            groups,
            launch_groups: groups.min(cap) as usize,
            wg,
            run: vw,
        });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("Pad")?;
        let value = T::from_c64(self.params.border.value().into());
        if let Some((host, regions)) = &plan.host {
            let (input, output) = (&self.input, &self.output);
            let bytes = (input.len() + output.len()) as u64 * std::mem::size_of::<T>() as u64;
            return regions.run("Pad", "host_pad", input, output, (bytes, 0), false, |x, y| host.run(value, x, y));
        }
        let Some(kernel) = plan.kernel.as_mut() else { return Ok(()) };
        let (idx, r) = (plan.index, &plan.rows);
        let element = std::mem::size_of::<T>() as u64;
        let bytes = (self.input.len() + self.output.len()) as u64 * element;
        kernel
            .launch()
            .input("src", &self.input)
            .index("src_off", idx, self.input.offset() as u64)
            .output("dst", &self.output)
            .index("dst_off", idx, self.output.offset() as u64)
            .scalar("nd", r.nd)
            .scalar("out_shape", r.out_shape)
            .scalar("in_shape", r.in_shape)
            .scalar("before", r.before)
            .scalar("src_stride", r.src)
            .scalar("dst_stride", r.dst)
            .scalar("n_last", plan.last[0])
            .scalar("out_last", plan.last[1])
            .scalar("before_last", plan.last[2])
            .index("src_step", idx, plan.steps[0])
            .index("dst_step", idx, plan.steps[1])
            .index("x_blocks", idx, plan.x_blocks)
            .index("groups", idx, plan.groups)
            .scalar("value", T::from_c64(self.params.border.value().into()))
            .global(&[plan.launch_groups * plan.wg])
            .local(&[plan.wg])
            .work(bytes, 0)
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_run_along_the_last_axis_longer_than_one() {
        // [5, 1, 7] padded to [7, 1, 9]: the middle axis goes, the last is walked, the first numbers the rows.
        let (last, rows) = row_axes(&[7, 1, 9], &[5, 1, 7], &[(1, 1), (0, 0), (2, 0)], &[7, 7, 1], &[9, 9, 1]).unwrap();
        assert_eq!(last, PadAxis { out: 9, input: 7, before: 2, src: 1, dst: 1 });
        assert_eq!((rows.nd, rows.out_shape[0], rows.in_shape[0], rows.before[0]), (1, 7, 5, 1));
        assert_eq!((rows.src[0], rows.dst[0], rows.out_shape[1]), (7, 9, 0));
        // A scalar pads nothing: one row of one element.
        let (last, rows) = row_axes(&[], &[], &[], &[], &[]).unwrap();
        assert_eq!((last.out, rows.nd), (1, 0));
        // Nine axes longer than 1 are more than the kernel takes.
        assert!(row_axes(&[2; 9], &[2; 9], &[(0, 0); 9], &[1; 9], &[1; 9]).is_err());
    }
}
