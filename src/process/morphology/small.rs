//! [`RemoveSmall`]: scikit-image's remove_small_objects and remove_small_holes. The objects are labelled on the
//! device by [`Label`]'s union-find (or, for labelled inputs, are the input's labels), counted per label by atomic
//! increments (`kernels/morphology.cl`, small_*), and one element-wise pass removes (or fills) the elements of labels
//! counted too few times.

use super::label::{Label, LabelParams, LabelStrategy};
use crate::app::Kernel;
use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::{EXTENTS, X_STRIDES, Y_STRIDES, array_view, index_type_for, indices};
use crate::process::{Prepared, Process};

/// Work-items per group.
const GROUP: usize = 256;
/// The largest label a labelled input may hold: its counts take 4 bytes a label up to it (1 GiB here), as
/// skimage's `np.bincount` allocates one count per value up to the largest.
const MOST_LABEL: u32 = 1 << 28;
/// Stride names of the label array in the kernels.
const L_STRIDES: [&str; 4] = ["lsw", "lsz", "lsy", "lsx"];

/// What [`RemoveSmall`] removes.
///
/// ```
/// use cliper::{ClApp, RemoveSmall, RemoveSmallParams, SizeLimit, SmallTarget, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[5], &[1.0f32, 0.0, 1.0, 1.0, 1.0])?;
/// let holes = RemoveSmallParams::new(SmallTarget::Holes, SizeLimit::AtMost(1));
/// assert_eq!(RemoveSmall::apply(&x, holes)?.to_vec()?, vec![1.0; 5]); // the 1-element gap filled
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmallTarget {
    /// remove_small_objects: the small objects are set to 0; the rest of the input is kept as it is.
    Objects,
    /// remove_small_holes: the small zero regions are set to 1; the result is 0/1.
    Holes,
}

/// Which objects are small: skimage 0.26's `max_size` (at most that many elements). Its deprecated `min_size` and
/// `area_threshold` are aliases of `max_size` in 0.26 (its deprecation decorator passes their value on as
/// `max_size`, so they remove sizes up to and including it, whatever their warning says): they are `AtMost` too.
///
/// ```
/// use cliper::{ClApp, RemoveSmall, RemoveSmallParams, SizeLimit, SmallTarget, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[6], &[1.0f32, 1.0, 0.0, 1.0, 1.0, 1.0])?;
/// let p = |n| RemoveSmallParams::new(SmallTarget::Objects, SizeLimit::AtMost(n));
/// assert_eq!(RemoveSmall::apply(&x, p(2))?.to_vec()?, vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0]); // 2 is at most 2
/// assert_eq!(RemoveSmall::apply(&x, p(1))?.to_vec()?, x.to_vec()?);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeLimit {
    /// `max_size`: objects of at most this many elements are small.
    AtMost(u64),
}

impl SizeLimit {
    /// The element count from which an object is kept.
    fn kept_from(self) -> u64 {
        match self {
            SizeLimit::AtMost(n) => n.saturating_add(1),
        }
    }
}

/// The settings of a [`RemoveSmall`]: what is removed, the size limit, the connectivity of the labelling
/// (skimage's `connectivity`: generate_binary_structure(ndim, connectivity), clamped to 1 … ndim as scipy clamps it)
/// and whether the input is already labelled (skimage's rule for integer inputs of remove_small_objects: each value
/// is one object however its elements lie; holes are always labelled).
///
/// ```
/// use cliper::{RemoveSmallParams, SizeLimit, SmallTarget};
/// let p = RemoveSmallParams::new(SmallTarget::Objects, SizeLimit::AtMost(64)).connectivity(2);
/// assert_eq!((p.connectivity, p.labelled), (2, false));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RemoveSmallParams {
    /// Objects or holes.
    pub target: SmallTarget,
    /// Which are small.
    pub limit: SizeLimit,
    /// The labelling's connectivity.
    pub connectivity: usize,
    /// The input holds labels (non-negative whole numbers), counted as they are.
    pub labelled: bool,
}

impl RemoveSmallParams {
    /// Removes `target` within `limit`, connectivity 1, the input not labelled.
    pub fn new(target: SmallTarget, limit: SizeLimit) -> RemoveSmallParams {
        RemoveSmallParams { target, limit, connectivity: 1, labelled: false }
    }
    /// Sets the connectivity.
    pub fn connectivity(mut self, connectivity: usize) -> RemoveSmallParams {
        self.connectivity = connectivity;
        self
    }
    /// Sets whether the input is labelled.
    pub fn labelled(mut self, labelled: bool) -> RemoveSmallParams {
        self.labelled = labelled;
        self
    }

    /// The op name in messages.
    fn op(&self) -> &'static str {
        match self.target {
            SmallTarget::Objects => "remove_small_objects",
            SmallTarget::Holes => "remove_small_holes",
        }
    }

    /// Whether the input's own values are the labels counted.
    fn counts_input(&self) -> bool {
        self.labelled && self.target == SmallTarget::Objects
    }

    /// The labelling of the input (or of its zero elements) over all its axes, or `None` when the input is
    /// counted as it is.
    fn labelling(&self, ndim: usize) -> Result<Option<LabelParams>> {
        if self.counts_input() {
            return Ok(None);
        }
        if !(1..=3).contains(&ndim) {
            return Err(Error::invalid(self.op(), format!("labels 1 to 3 axes; the input has {ndim}")));
        }
        Ok(Some(LabelParams::default().connectivity(self.connectivity.clamp(1, ndim)).rank(ndim)))
    }
}

/// The labelling of the objects: the [`Label`] process, its input (the zero elements made 1, for holes; `None`:
/// the input itself) and its labels.
struct Labelling<T: RealElement> {
    label: Label<T>,
    inverted: Option<XData<T>>,
    labels: XData<T>,
}

/// What [`RemoveSmall`] runs: the kernels, the labelling (absent for labelled inputs) and the counts.
struct Plan<T: RealElement> {
    invert: Kernel,
    check: Kernel,
    zero: Kernel,
    count: Kernel,
    keep: Kernel,
    /// The labelling (absent for labelled inputs).
    label: Option<Labelling<T>>,
    /// One count per label (uint in a float array).
    counts: XData<f32>,
    /// The largest label and the problems of a labelled input (uint in a float array).
    found: XData<f32>,
    index: IndexType,
    input: XData<T>,
    output: XData<T>,
    params: RemoveSmallParams,
}

impl<T: RealElement> Plan<T> {
    fn new(input: &XData<T>, output: &XData<T>, params: &RemoveSmallParams) -> Result<Plan<T>> {
        let op = params.op();
        let shape = input.shape().to_vec();
        if output.shape() != shape.as_slice() {
            return Err(Error::shape(op, &shape, output.shape()));
        }
        let count: usize = shape.iter().product();
        if count as u64 + 2 >= u64::from(u32::MAX) {
            return Err(Error::Unsupported {
                what: format!("{op} of {count} elements (shape {shape:?}): at most 2^32 − 3 per call"),
            });
        }
        let app = input.app().clone();
        let label = match params.labelling(shape.len())? {
            None => None,
            Some(label_params) => {
                let inverted = match params.target {
                    SmallTarget::Holes => Some(XData::<T>::uninit(&app, op, &shape)?),
                    SmallTarget::Objects => None,
                };
                let labels = XData::<T>::uninit(&app, op, &shape)?;
                let mut label = Label::new(inverted.as_ref().unwrap_or(input), &labels, label_params);
                label.init()?;
                Some(Labelling { label, inverted, labels })
            }
        };
        // Labels made here number at most the elements; a labelled input's largest is read at each launch.
        let counts = XData::<f32>::uninit(&app, op, &[if label.is_some() { count + 1 } else { 1 }])?;
        let found = XData::<f32>::uninit(&app, op, &[2])?;
        let index = index_type_for(&[input.layout(), output.layout()], &[count as u64 + 1]);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("morphology.cl", &kernels::with_common(kernels::MORPHOLOGY), &options)?;
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by(op));
        Ok(Plan {
            invert: k("small_invert")?,
            check: k("small_check")?,
            zero: k("small_zero")?,
            count: k("small_count")?,
            keep: k("small_keep")?,
            label,
            counts,
            found,
            index,
            input: input.clone(),
            output: output.clone(),
            params: params.clone(),
        })
    }

    /// The input's view over all its axes (up to three; more are merged into the batch axis).
    fn view(&self, a: &XData<T>) -> Result<([usize; 4], [usize; 4])> {
        array_view(self.params.op(), a, a.shape().len().clamp(1, 3))
    }

    fn launch(&mut self) -> Result<()> {
        let idx = self.index;
        let (extents, sx) = self.view(&self.input)?;
        let (_, sy) = self.view(&self.output)?;
        let count: usize = extents.iter().product();
        if count == 0 {
            return Ok(());
        }
        let global = [count.div_ceil(GROUP) * GROUP];
        let x0 = self.input.offset() as u64;
        // skimage's shortcut: max_size 0 removes nothing and reads no labels.
        if self.params.limit == SizeLimit::AtMost(0) {
            let input = self.input.clone();
            return self.enqueue_keep(&input, &sx, &extents, &sx, &sy);
        }
        let (labels, sl) = match &mut self.label {
            Some(Labelling { label, inverted, labels }) => {
                if let Some(inverted) = inverted {
                    let l = self.invert.launch().input("x", &self.input).index("x0", idx, x0);
                    indices(indices(l, idx, X_STRIDES, &sx).output("y", inverted), idx, EXTENTS, &extents)
                        .global(&global)
                        .local(&[GROUP])
                        .enqueue()?;
                }
                label.launch()?;
                let (_, sl) = array_view(self.params.op(), labels, shape_rank(labels))?;
                (labels.clone(), sl)
            }
            None => {
                self.size_counts(&extents, &sx, &global)?;
                (self.input.clone(), sx)
            }
        };
        let n_counts = self.counts.shape().iter().product::<usize>();
        self.zero
            .launch()
            .output("counts", &self.counts)
            .index("n", idx, n_counts as u64)
            .global(&[n_counts.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .enqueue()?;
        let l = self.count.launch().input("l", &labels).index("l0", idx, labels.offset() as u64);
        indices(indices(l, idx, L_STRIDES, &sl), idx, EXTENTS, &extents)
            .in_out("counts", &self.counts)
            .global(&global)
            .local(&[GROUP])
            .enqueue()?;
        self.enqueue_keep(&labels, &sl, &extents, &sx, &sy)
    }

    /// The output from the input, the labels and their counts.
    fn enqueue_keep(
        &mut self,
        labels: &XData<T>,
        sl: &[usize; 4],
        extents: &[usize; 4],
        sx: &[usize; 4],
        sy: &[usize; 4],
    ) -> Result<()> {
        let idx = self.index;
        let count: usize = extents.iter().product();
        let (x0, y0) = (self.input.offset() as u64, self.output.offset() as u64);
        let l = indices(self.keep.launch().input("x", &self.input).index("x0", idx, x0), idx, X_STRIDES, sx);
        let l = indices(l.input("l", labels).index("l0", idx, labels.offset() as u64), idx, L_STRIDES, sl);
        let l = indices(l.output("y", &self.output).index("y0", idx, y0), idx, Y_STRIDES, sy);
        indices(l, idx, EXTENTS, extents)
            .input("counts", &self.counts)
            .scalar("limit", self.params.limit.kept_from())
            .scalar("holes", i32::from(self.params.target == SmallTarget::Holes))
            .global(&[count.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .work((count * 3 * std::mem::size_of::<T>()) as u64, 0)
            .enqueue()
    }

    /// For a labelled input: checks its labels as skimage's bincount does and sizes the counts to its largest label
    /// (this waits for the device once: the largest label decides the size).
    fn size_counts(&mut self, extents: &[usize; 4], sx: &[usize; 4], global: &[usize; 1]) -> Result<()> {
        let (idx, op) = (self.index, self.params.op());
        self.zero
            .launch()
            .output("counts", &self.found)
            .index("n", idx, 2)
            .global(&[GROUP])
            .local(&[GROUP])
            .enqueue()?;
        let x0 = self.input.offset() as u64;
        let l = indices(self.check.launch().input("x", &self.input).index("x0", idx, x0), idx, X_STRIDES, sx);
        indices(l, idx, EXTENTS, extents)
            .scalar("most", MOST_LABEL)
            .in_out("found", &self.found)
            .global(global)
            .local(&[GROUP])
            .enqueue()?;
        let found: Vec<u32> = self.found.to_vec()?.iter().map(|v| v.to_bits()).collect();
        let (largest, problems) = (found.first().copied().unwrap_or(0), found.get(1).copied().unwrap_or(0));
        if problems & 1 != 0 {
            return Err(Error::invalid(
                op,
                "negative labels are not supported (skimage's rule); relabel the input with `label`",
            ));
        }
        if problems & 2 != 0 {
            return Err(Error::invalid(op, "labels must be whole numbers; the input holds a fraction or NaN"));
        }
        if problems & 4 != 0 {
            return Err(Error::invalid(
                op,
                format!("labels above {MOST_LABEL} are not supported; relabel the input with `label`"),
            ));
        }
        let needed = largest as usize + 1;
        if self.counts.shape().iter().product::<usize>() < needed {
            self.counts = XData::<f32>::uninit(self.input.app(), op, &[needed])?;
        }
        Ok(())
    }
}

/// The number of axes of an array.
fn shape_rank<T: RealElement>(a: &XData<T>) -> usize {
    a.shape().len().clamp(1, 3)
}

/// How a [`RemoveSmall`] finds its objects: by [`Label`]'s union-find (`labelling`), or — a labelled input —
/// its own values (`None`); then per-label counts by atomic increments and one pass that keeps or fills.
///
/// ```
/// use cliper::{ClApp, Process, RemoveSmall, RemoveSmallParams, SizeLimit, SmallStrategy, SmallTarget, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[6, 7])?;
/// let p = RemoveSmallParams::new(SmallTarget::Objects, SizeLimit::AtMost(3)).connectivity(2);
/// let mut r = RemoveSmall::new(&x, &XData::zeros(&app, &[6, 7])?, p);
/// r.init()?;
/// let SmallStrategy { labelling } = r.strategy().unwrap();
/// assert_eq!(labelling.unwrap().neighbours, 8);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmallStrategy {
    /// The labelling of the objects (or of the holes); `None` when the input's values are the labels.
    pub labelling: Option<LabelStrategy>,
}

impl std::fmt::Display for SmallStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.labelling {
            Some(label) => write!(f, "labelled by {label}; sizes by atomic counts, one keep pass"),
            None => write!(f, "the input's labels; sizes by atomic counts, one keep pass"),
        }
    }
}

/// scikit-image 0.26's remove_small_objects and remove_small_holes on real data.
///
/// Objects: the connected components of the non-zero elements (or, with [`RemoveSmallParams::labelled`], the
/// elements of each label value) of at most `max_size` elements are set to 0;
/// every other element keeps its value. Holes: the connected components of the zero elements that are small — those
/// touching the array's edge included, as skimage's — are set to 1, and every non-zero element is 1. Labelled inputs
/// must hold non-negative whole numbers up to 2^28; their launch reads the largest label back (one wait). Labelling
/// in float32 is exact up to 2^24 elements (as [`Label`]'s).
///
/// ```
/// use cliper::{ClApp, RemoveSmall, RemoveSmallParams, SizeLimit, SmallTarget, XData};
/// let app = ClApp::new()?;
/// // skimage's docstring example: objects of 1 and 6 pixels (the 1-pixel one at the right touches the
/// // 6-pixel one only diagonally).
/// let a = [0.0f32, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0];
/// let x = XData::from_slice(&app, &[3, 5], &a)?;
/// let p = RemoveSmallParams::new(SmallTarget::Objects, SizeLimit::AtMost(5));
/// let y = RemoveSmall::apply(&x, p)?.to_vec()?;
/// assert_eq!(y, vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct RemoveSmall<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: RemoveSmallParams,
    plan: Prepared<Plan<T>>,
}

impl<T: RealElement> RemoveSmall<T> {
    /// `output = remove_small_objects(input)` or `remove_small_holes(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: RemoveSmallParams) -> RemoveSmall<T> {
        RemoveSmall { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: RemoveSmallParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), params.op(), &Self::output_shape(input.shape(), &params)?)?;
        RemoveSmall::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The labelling `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<SmallStrategy> {
        let plan = self.plan.as_ref()?;
        Some(SmallStrategy { labelling: plan.label.as_ref().and_then(|l| l.label.strategy()) })
    }

    /// The output shape: the input's (after checking that it can be labelled).
    ///
    /// ```
    /// use cliper::{RemoveSmall, RemoveSmallParams, SizeLimit, SmallTarget};
    /// let holes = RemoveSmallParams::new(SmallTarget::Holes, SizeLimit::AtMost(64));
    /// assert_eq!(RemoveSmall::<f32>::output_shape(&[4, 5], &holes)?, vec![4, 5]);
    /// assert!(RemoveSmall::<f32>::output_shape(&[2, 3, 4, 5], &holes).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &RemoveSmallParams) -> Result<Vec<usize>> {
        params.labelling(input.len())?;
        Ok(input.to_vec())
    }
}

impl<T: RealElement> Process for RemoveSmall<T> {
    fn name(&self) -> &str {
        self.params.op()
    }

    fn init(&mut self) -> Result<()> {
        self.plan.set(Plan::new(&self.input, &self.output, &self.params)?);
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        self.plan.get(self.params.op())?.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
