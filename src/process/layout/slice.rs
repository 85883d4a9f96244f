//! [`Slice`]: numpy's basic indexing (`x[10:50, :, ::-2, 3]`) as one gather on the device, and [`SliceSpec`], the
//! index expression it reads (`10:50,:,::-2,3`), resolved against a shape by numpy's rules.

use crate::app::Kernel;
use crate::data::XData;
use crate::element::Element;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::elementwise::ElementwiseStrategy;
use crate::process::planning::{MAX_AXES, index_type_for};
use crate::process::{Prepared, Process};
use std::str::FromStr;

/// One entry of a [`SliceSpec`]: what numpy's basic indexing allows.
///
/// ```
/// use cliper::{SliceEntry, SliceSpec};
/// let spec: SliceSpec = "2, ..., -3::-1".parse()?;
/// assert_eq!(spec.0[0], SliceEntry::Index(2));
/// assert_eq!(spec.0[1], SliceEntry::Ellipsis);
/// assert_eq!(spec.0[2], SliceEntry::Range { start: Some(-3), stop: None, step: Some(-1) });
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SliceEntry {
    /// `start:stop:step`, each optional (`None` is numpy's default for the step's sign).
    Range {
        /// First index (negative counts from the end).
        start: Option<isize>,
        /// One past the last index (negative counts from the end).
        stop: Option<isize>,
        /// The step (not 0); `None` is 1.
        step: Option<isize>,
    },
    /// A bare integer: that one index, and the axis is dropped.
    Index(isize),
    /// `...`: as many whole axes as the other entries leave.
    Ellipsis,
}

/// numpy's basic index expression, comma-separated: `start:stop:step` ranges (each part optional, negative values
/// counting from the end, negative steps reading backwards), bare integers (that index; the axis is dropped) and
/// at most one `...`. Fewer entries than axes leave the rest whole.
///
/// ```
/// use cliper::SliceSpec;
/// let spec: SliceSpec = "1:-1, ..., ::-2".parse()?;
/// let axes = spec.resolve(&[5, 3, 7])?;
/// assert_eq!(SliceSpec::output_shape(&axes), vec![3, 3, 4]);
/// assert_eq!((axes[2].start, axes[2].step), (6, -2)); // 6, 4, 2, 0
/// assert!("::0".parse::<SliceSpec>()?.resolve(&[4]).unwrap_err().to_string().contains("step 0"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SliceSpec(pub Vec<SliceEntry>);

/// How one input axis is read: `count` indices from `start` by `step`; `kept` false for an integer index (the axis
/// is dropped, `count` is 1).
///
/// ```
/// use cliper::{SliceAxis, SliceSpec};
/// let axes = "3, 10:0:-4".parse::<SliceSpec>()?.resolve(&[5, 8])?; // numpy: x[3, 10:0:-4] of a 5×8 x
/// assert_eq!(axes[0], SliceAxis { start: 3, count: 1, step: 1, kept: false });
/// assert_eq!(axes[1], SliceAxis { start: 7, count: 2, step: -4, kept: true }); // 7, 3
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceAxis {
    /// The first index read (for an empty range, where numpy's clamped start lies: possibly the extent itself).
    pub start: usize,
    /// How many indices are read.
    pub count: usize,
    /// The step between them (never 0).
    pub step: isize,
    /// Whether the axis remains in the result.
    pub kept: bool,
}

impl FromStr for SliceEntry {
    type Err = Error;
    fn from_str(text: &str) -> Result<SliceEntry> {
        let text = text.trim();
        let number = |part: &str| -> Result<Option<isize>> {
            let part = part.trim();
            if part.is_empty() {
                return Ok(None);
            }
            part.parse().map(Some).map_err(|_| {
                Error::invalid("slice", format!("`{part}` in `{text}` is not an integer (entries are start:stop:step)"))
            })
        };
        if text == "..." {
            return Ok(SliceEntry::Ellipsis);
        }
        let parts: Vec<&str> = text.split(':').collect();
        match parts.as_slice() {
            [index] => match number(index)? {
                Some(i) => Ok(SliceEntry::Index(i)),
                None => Err(Error::invalid("slice", "an empty entry: write `:` for a whole axis")),
            },
            [start, stop] => Ok(SliceEntry::Range { start: number(start)?, stop: number(stop)?, step: None }),
            [start, stop, step] => {
                Ok(SliceEntry::Range { start: number(start)?, stop: number(stop)?, step: number(step)? })
            }
            _ => Err(Error::invalid("slice", format!("`{text}` has more than two `:` (entries are start:stop:step)"))),
        }
    }
}

impl FromStr for SliceSpec {
    type Err = Error;
    fn from_str(text: &str) -> Result<SliceSpec> {
        let entries = text.split(',').map(str::parse).collect::<Result<Vec<SliceEntry>>>()?;
        if entries.iter().filter(|e| **e == SliceEntry::Ellipsis).count() > 1 {
            return Err(Error::invalid("slice", format!("`{text}` has more than one `...`")));
        }
        Ok(SliceSpec(entries))
    }
}

impl std::fmt::Display for SliceSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let part = |v: Option<isize>| v.map(|v| v.to_string()).unwrap_or_default();
        let entries: Vec<String> = self
            .0
            .iter()
            .map(|e| match *e {
                SliceEntry::Ellipsis => "...".to_string(),
                SliceEntry::Index(i) => i.to_string(),
                SliceEntry::Range { start, stop, step: None } => format!("{}:{}", part(start), part(stop)),
                SliceEntry::Range { start, stop, step } => format!("{}:{}:{}", part(start), part(stop), part(step)),
            })
            .collect();
        write!(f, "{}", entries.join(","))
    }
}

/// numpy's `PySlice_AdjustIndices` for one bound: negative values count from the end, then the bound is clamped to
/// what the step's direction can reach (`-1` meaning "before index 0" for a backward step).
fn clamp_bound(value: isize, n: isize, step: isize) -> isize {
    let value = if value < 0 { value + n } else { value };
    if value < 0 {
        if step < 0 { -1 } else { 0 }
    } else if value >= n {
        if step < 0 { n - 1 } else { n }
    } else {
        value
    }
}

/// A range entry on an axis of extent `n`: its first index, length and step (numpy's rules).
fn resolve_range(
    shape: &[usize],
    axis: usize,
    (start, stop, step): (Option<isize>, Option<isize>, Option<isize>),
) -> Result<SliceAxis> {
    let n = shape.get(axis).copied().unwrap_or(0) as isize;
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(Error::invalid("slice", format!("axis {axis} of shape {shape:?}: step 0 (a step is never 0)")));
    }
    let start = start.map_or(if step < 0 { n - 1 } else { 0 }, |s| clamp_bound(s, n, step));
    let stop = stop.map_or(if step < 0 { -1 } else { n }, |s| clamp_bound(s, n, step));
    let count = if step > 0 && start < stop {
        (stop - start - 1) / step + 1
    } else if step < 0 && stop < start {
        (start - stop - 1) / (-step) + 1
    } else {
        0
    };
    Ok(SliceAxis { start: start.max(0) as usize, count: count as usize, step, kept: true })
}

impl SliceSpec {
    /// How each axis of an array of `shape` is read (one [`SliceAxis`] per input axis), or the refusal naming the
    /// axis, the shape and the entry: a step of 0, an index out of range, more entries than axes.
    pub fn resolve(&self, shape: &[usize]) -> Result<Vec<SliceAxis>> {
        let given = self.0.iter().filter(|e| **e != SliceEntry::Ellipsis).count();
        if given > shape.len() {
            return Err(Error::invalid(
                "slice",
                format!("`{self}` has {given} entries for data of shape {shape:?} ({} axes)", shape.len()),
            ));
        }
        let whole = SliceEntry::Range { start: None, stop: None, step: None };
        let mut entries = Vec::with_capacity(shape.len());
        for entry in &self.0 {
            if *entry == SliceEntry::Ellipsis {
                entries.extend(std::iter::repeat_n(whole, shape.len() - given));
            } else {
                entries.push(*entry);
            }
        }
        entries.resize(shape.len(), whole);
        entries
            .iter()
            .enumerate()
            .map(|(axis, entry)| match *entry {
                SliceEntry::Index(i) => {
                    let n = shape.get(axis).copied().unwrap_or(0);
                    let at = if i < 0 { i + n as isize } else { i };
                    if at < 0 || at >= n as isize {
                        return Err(Error::invalid(
                            "slice",
                            format!("index {i} is out of bounds for axis {axis} with size {n} (shape {shape:?})"),
                        ));
                    }
                    Ok(SliceAxis { start: at as usize, count: 1, step: 1, kept: false })
                }
                SliceEntry::Range { start, stop, step } => resolve_range(shape, axis, (start, stop, step)),
                SliceEntry::Ellipsis => resolve_range(shape, axis, (None, None, None)),
            })
            .collect()
    }

    /// The result's shape: the kept axes' counts.
    pub fn output_shape(axes: &[SliceAxis]) -> Vec<usize> {
        axes.iter().filter(|a| a.kept).map(|a| a.count).collect()
    }
}

/// `x[spec]`, numpy's basic indexing, copied into a new array: ranges with any step (negative ones read backwards),
/// integer indices that drop their axis. One gather kernel with signed strides over up to eight kept axes longer
/// than 1; any element type, any strided input view. The output must not overlap the input.
///
/// ```
/// use cliper::{ClApp, Process, Slice, SliceSpec, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 4], &[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])?;
/// let y = Slice::apply(&x, &"1, ::-2".parse::<SliceSpec>()?)?; // numpy: x[1, ::-2]
/// assert_eq!(y.to_vec()?, vec![7.0, 5.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Slice<T: Element> {
    x: XData<T>,
    out: XData<T>,
    axes: Vec<SliceAxis>,
    plan: Prepared<Plan>,
}

struct Plan {
    kernel: Option<Kernel>,
    index: IndexType,
    x0: i64,
    nd: u32,
    shape: [u64; MAX_AXES],
    sx: [i64; MAX_AXES],
    so: [u64; MAX_AXES],
    count: u64,
    groups: usize,
}

const GROUP: usize = 256;

impl<T: Element> Slice<T> {
    /// The slice of `x` that `axes` (from [`SliceSpec::resolve`] on `x`'s shape) describe, into `out`.
    pub fn new(x: &XData<T>, out: &XData<T>, axes: &[SliceAxis]) -> Slice<T> {
        Slice { x: x.clone(), out: out.clone(), axes: axes.to_vec(), plan: Prepared::default() }
    }

    /// Allocates the output, slices `x` into it once and returns it.
    pub fn apply(x: &XData<T>, spec: &SliceSpec) -> Result<XData<T>> {
        let axes = spec.resolve(x.shape())?;
        let out = XData::uninit(x.app(), "Slice", &SliceSpec::output_shape(&axes))?;
        Slice::new(x, &out, &axes).run()?;
        Ok(out)
    }

    /// The shape of `x[spec]` for an `x` of `shape` (the refusals of [`SliceSpec::resolve`]).
    ///
    /// ```
    /// use cliper::{Slice, SliceSpec};
    /// let spec: SliceSpec = "1, ::-2".parse()?;
    /// assert_eq!(Slice::<f32>::output_shape(&[2, 4], &spec)?, vec![2]);
    /// assert!(Slice::<f32>::output_shape(&[1, 4], &spec).is_err()); // index 1 of an axis of 1
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], spec: &SliceSpec) -> Result<Vec<usize>> {
        Ok(SliceSpec::output_shape(&spec.resolve(shape)?))
    }

    /// The gather `init` planned (its axes are the kept axes longer than 1); `None` before `init`.
    pub fn strategy(&self) -> Option<ElementwiseStrategy> {
        self.plan
            .as_ref()
            .map(|p| ElementwiseStrategy::one_kernel(p.kernel.is_some(), p.nd as usize, p.groups, GROUP, p.index))
    }
}

impl<T: Element> Process for Slice<T> {
    fn name(&self) -> &str {
        "Slice"
    }

    fn init(&mut self) -> Result<()> {
        let (x, out) = (&self.x, &self.out);
        if self.axes.len() != x.ndim() {
            return Err(Error::invalid(
                "Slice",
                format!("{} resolved axes for an input of shape {:?}", self.axes.len(), x.shape()),
            ));
        }
        let expected = SliceSpec::output_shape(&self.axes);
        if out.shape() != expected {
            return Err(Error::shape_because("Slice", &expected, out.shape(), "the slice's shape"));
        }
        if out.overlaps(x) && !out.is_empty() {
            return Err(Error::Unsupported {
                what: "Slice in place: give an output that does not overlap the input".into(),
            });
        }
        // The first element read, and (extent, signed input stride, output stride) of each kept axis longer than 1.
        let mut x0 = x.offset() as i64;
        let mut kept = Vec::new();
        let mut out_strides = out.strides().iter();
        for (axis, &stride) in self.axes.iter().zip(x.strides()) {
            if axis.count > 0 {
                x0 += axis.start as i64 * stride as i64;
            }
            if !axis.kept {
                continue;
            }
            let so = out_strides.next().copied().unwrap_or(0);
            if axis.count > 1 {
                kept.push((axis.count as u64, axis.step as i64 * stride as i64, so as u64));
            }
        }
        if kept.len() > MAX_AXES {
            return Err(Error::Unsupported {
                what: format!(
                    "Slice: result shape {expected:?} has {} axes longer than 1; at most {MAX_AXES}",
                    kept.len()
                ),
            });
        }
        let count = out.len() as u64;
        let mut plan = Plan {
            kernel: None,
            index: IndexType::U32,
            x0,
            nd: kept.len() as u32,
            shape: std::array::from_fn(|k| kept.get(k).map_or(1, |a| a.0)),
            sx: std::array::from_fn(|k| kept.get(k).map_or(0, |a| a.1)),
            so: std::array::from_fn(|k| kept.get(k).map_or(0, |a| a.2)),
            count,
            groups: out.len().div_ceil(GROUP).clamp(1, 1 << 16),
        };
        plan.index = index_type_for(&[out.layout()], &[count]);
        if count > 0 {
            let options = format!("{} -DIDX={}", T::build_options(), plan.index.cl_type());
            let program = x.app().build_program("slice.cl", &kernels::with_common(kernels::SLICE), &options)?;
            plan.kernel = Some(program.kernel("slice_gather")?.owned_by("Slice"));
        }
        self.plan.set(plan);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("Slice")?;
        let Some(kernel) = plan.kernel.as_mut() else { return Ok(()) };
        let (idx, groups) = (plan.index, plan.groups);
        kernel
            .launch()
            .input("x", &self.x)
            .scalar("x0", plan.x0)
            .output("out", &self.out)
            .index("o0", idx, self.out.offset() as u64)
            .scalar("nd", plan.nd)
            .scalar("shape", plan.shape)
            .scalar("sx", plan.sx)
            .scalar("so", plan.so)
            .index("count", idx, plan.count)
            .global(&[groups * GROUP])
            .local(&[GROUP])
            .work(plan.count * 2 * std::mem::size_of::<T>() as u64, 0)
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
