//! [`DistanceTransform`]: scipy.ndimage.distance_transform_edt — the exact Euclidean distance from every non-zero
//! element to the nearest zero element, with a voxel spacing per axis (`sampling`), computed one axis at a time
//! (Felzenszwalb and Huttenlocher's lower envelope of parabolas, `kernels/morphology.cl`) and finished by one
//! element-wise square root — or, with [`DistanceParams::indices`], the feature transform: the index of each
//! element's nearest zero element (scipy's `return_indices`), carried through the same passes.

use crate::app::Kernel;
use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::elementwise::{Elementwise, Expr};
use crate::process::planning::{EXTENTS, PassView, X_STRIDES, Y_STRIDES, index_type_for, indices, pass_view};
use crate::process::{Prepared, Process};
use num_complex::Complex64;

/// Work-items per group and the most groups (the kernel loops over the rest of the lines).
const GROUP: usize = 64;
const MAX_GROUPS: usize = 1 << 16;

/// The settings of a [`DistanceTransform`]: the spacing along each axis (scipy's `sampling`: one for every axis or
/// one per axis, default 1 — for a scan, its voxel size), the axes spanned (the last `rank`; default every
/// axis up to three) and whether the result is the distances or the indices of the nearest zero elements.
///
/// ```
/// use cliper::DistanceParams;
/// let p = DistanceParams::default().sampling(&[2.5, 0.8, 0.8]).indices(true);
/// assert_eq!(p.sampling, vec![2.5, 0.8, 0.8]);
/// assert!(p.indices);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DistanceParams {
    /// The spacing along each axis.
    pub sampling: Vec<f64>,
    /// The axes spanned, the last ones.
    pub rank: Option<usize>,
    /// The result is the index of each element's nearest zero element (scipy's `return_indices`: a leading axis
    /// of one component per axis of the input, whole numbers), not the distance.
    pub indices: bool,
}

impl Default for DistanceParams {
    fn default() -> DistanceParams {
        DistanceParams { sampling: vec![1.0], rank: None, indices: false }
    }
}

impl DistanceParams {
    /// Sets the spacing (one, or one per axis).
    pub fn sampling(mut self, sampling: &[f64]) -> DistanceParams {
        self.sampling = sampling.to_vec();
        self
    }
    /// Sets the axes spanned.
    pub fn rank(mut self, rank: usize) -> DistanceParams {
        self.rank = Some(rank);
        self
    }
    /// Sets whether the result is the indices of the nearest zero elements instead of the distances.
    pub fn indices(mut self, indices: bool) -> DistanceParams {
        self.indices = indices;
        self
    }

    /// The axes spanned and the squared spacing of each, for an array of `ndim` axes.
    fn resolve(&self, ndim: usize) -> Result<(usize, Vec<f64>)> {
        let op = "distance_transform_edt";
        let rank = self.rank.unwrap_or(if self.sampling.len() > 1 { self.sampling.len() } else { ndim.min(3) });
        if !(1..=3).contains(&rank) || rank > ndim {
            return Err(Error::invalid(op, format!("spans 1 to 3 of the input's {ndim} axes; asked for {rank}")));
        }
        let sampling = match self.sampling.as_slice() {
            [one] => vec![*one; rank],
            many if many.len() == rank => many.to_vec(),
            many => {
                return Err(Error::invalid(
                    op,
                    format!("gives {} spacings for {rank} axes: give one, or one per axis", many.len()),
                ));
            }
        };
        if let Some(bad) = sampling.iter().find(|s| !(**s > 0.0 && s.is_finite())) {
            return Err(Error::invalid(op, format!("spacings must be positive and finite, got {bad}")));
        }
        Ok((rank, sampling.iter().map(|s| s * s).collect()))
    }
}

/// What a [`DistanceTransform`] runs.
///
/// ```
/// use cliper::{ClApp, DistanceParams, DistanceTransform, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[5, 6, 7])?;
/// let mut p = DistanceTransform::new(&x, &XData::zeros(&app, &[5, 6, 7])?, DistanceParams::default());
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().passes, 3);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistanceStrategy {
    /// One pass per axis spanned, each one work-item per line.
    pub passes: usize,
}

impl std::fmt::Display for DistanceStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} lower-envelope pass(es), one work-item per line, then a square root", self.passes)
    }
}

/// The exact Euclidean distance transform of real data (scipy.ndimage.distance_transform_edt): each non-zero
/// element gets its distance to the nearest zero element, scaled per axis by `sampling`; zero elements get 0.
/// An input without any zero element gives +inf everywhere (scipy measures to a point outside the array then).
///
/// With [`DistanceParams::indices`] the result is scipy's `return_indices` instead: shape `[ndim, ...shape]`,
/// component `a` of element `i` the coordinate along axis `a` of the zero element nearest to `i` (a zero element
/// indexes itself; on an axis the transform does not span, the element's own coordinate). Ties between equally
/// near zeros go, axis by axis, to the lower position — scipy's rule; with a spacing whose squares round (not
/// whole numbers) a near-tie may round the other way than in scipy's arithmetic. Where there is no zero element
/// at all: -1 on the first axis spanned and 0 on the others, as scipy.
///
/// ```
/// use cliper::{ClApp, DistanceParams, DistanceTransform, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 3], &[0.0f64, 1.0, 1.0, 1.0, 1.0, 1.0])?;
/// let d = DistanceTransform::apply(&x, DistanceParams::default().sampling(&[2.0, 1.0]))?.to_vec()?;
/// assert_eq!(d, vec![0.0, 1.0, 2.0, 2.0, 5f64.sqrt(), 8f64.sqrt()]);
/// let i = DistanceTransform::apply(&x, DistanceParams::default().indices(true))?;
/// assert_eq!(i.shape(), &[2, 2, 3]);
/// assert_eq!(i.to_vec()?, vec![0.0; 12]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct DistanceTransform<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: DistanceParams,
    plan: Prepared<Plan<T>>,
}

struct Pass<T: RealElement> {
    source: XData<T>,
    target: XData<T>,
    axis: i32,
    first: i32,
    w: f64,
    view: PassView,
    /// The features read and written (the feature transform; dummies when not tracked).
    features: [XData<f32>; 2],
}

/// One component of the index array: its slice of the output and how it reads the features.
struct Component<T: RealElement> {
    target: XData<T>,
    stride: u64,
    extent: u64,
    own: i32,
    none_value: i32,
}

struct Plan<T: RealElement> {
    kernel: Kernel,
    passes: Vec<Pass<T>>,
    v: XData<T>,
    z: XData<T>,
    /// The square root (distances) or the index components with their kernel and the final features.
    finish: Finish<T>,
    index: IndexType,
}

enum Finish<T: RealElement> {
    Root(Box<Elementwise<T, T>>),
    Indices { kernel: Kernel, features: XData<f32>, components: Vec<Component<T>> },
}

impl<T: RealElement> DistanceTransform<T> {
    /// `output = distance_transform_edt(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: DistanceParams) -> DistanceTransform<T> {
        DistanceTransform { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: DistanceParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "DistanceTransform", &Self::output_shape(input.shape(), &params)?)?;
        DistanceTransform::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's (after checking the spacing against it), or with `indices` a leading axis of
    /// one component per axis before it.
    ///
    /// ```
    /// use cliper::{DistanceParams, DistanceTransform};
    /// assert_eq!(DistanceTransform::<f32>::output_shape(&[4, 5], &DistanceParams::default())?, vec![4, 5]);
    /// let indices = DistanceParams::default().indices(true);
    /// assert_eq!(DistanceTransform::<f32>::output_shape(&[4, 5], &indices)?, vec![2, 4, 5]);
    /// let e = DistanceTransform::<f32>::output_shape(&[4, 5], &DistanceParams::default().sampling(&[1.0, 2.0, 3.0]));
    /// assert!(e.is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &DistanceParams) -> Result<Vec<usize>> {
        params.resolve(input.len())?;
        if !params.indices {
            return Ok(input.to_vec());
        }
        let count: usize = input.iter().product();
        // Features are 32-bit positions (one value, u32::MAX, means none) and f32 holds whole numbers to 2^24.
        let most = if std::mem::size_of::<T>() == 4 { 1usize << 24 } else { u32::MAX as usize };
        if count >= u32::MAX as usize || input.iter().any(|&n| n > most) {
            return Err(Error::Unsupported {
                what: format!(
                    "the indices of the nearest zeros of shape {input:?} in {}: at most 2^32 - 1 elements and \
                     {most} along an axis",
                    T::NAME
                ),
            });
        }
        Ok([&[input.len()], input].concat())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<DistanceStrategy> {
        self.plan.as_ref().map(|p| DistanceStrategy { passes: p.passes.len() })
    }

    /// The components of the index array: one slice of the output per axis, each reading the features by the
    /// axis's C-order stride and extent.
    fn components(&self, rank: usize) -> Result<Vec<Component<T>>> {
        let shape = self.input.shape();
        let ndim = shape.len();
        (0..ndim)
            .map(|a| {
                let stride: usize = shape.get(a + 1..).map_or(1, |rest| rest.iter().product());
                let spanned_first = ndim - rank;
                Ok(Component {
                    target: self.output.index_axis(0, a)?,
                    stride: stride as u64,
                    extent: shape.get(a).copied().unwrap_or(1) as u64,
                    own: i32::from(a < spanned_first),
                    none_value: if a == spanned_first { -1 } else { 0 },
                })
            })
            .collect()
    }
}

impl<T: RealElement> Process for DistanceTransform<T> {
    fn name(&self) -> &str {
        "distance_transform_edt"
    }

    fn init(&mut self) -> Result<()> {
        let shape = self.input.shape().to_vec();
        let expected = Self::output_shape(&shape, &self.params)?;
        if self.output.shape() != expected.as_slice() {
            return Err(Error::shape_because(self.name(), &expected, self.output.shape(), "the input's shape"));
        }
        let indices = self.params.indices;
        if indices && !self.output.is_contiguous() {
            return Err(Error::Unsupported {
                what: format!(
                    "{} indices into a view (strides {:?}); give a new array",
                    self.name(),
                    self.output.strides()
                ),
            });
        }
        let (rank, squared) = self.params.resolve(shape.len())?;
        let app = self.input.app().clone();
        let count: usize = shape.iter().product();
        // Passes ping-pong between two scratch arrays (a pass reads its source's other elements while writing);
        // the last writes the output (the distances), or a scratch array when the features are the result.
        let scratch = [XData::<T>::uninit(&app, self.name(), &shape)?, XData::<T>::uninit(&app, self.name(), &shape)?];
        // Features (uint positions in float arrays' bytes), ping-pong likewise; one-element dummies when not tracked.
        let words = |n: usize| XData::<f32>::uninit(&app, "DistanceTransform", &[n.max(1)]);
        let feature_len = if indices { count } else { 1 };
        let features = [words(feature_len)?, words(feature_len)?];
        let mut passes = Vec::with_capacity(rank);
        let mut source = self.input.clone();
        // Scratch per pass: the sites (n per line) and boundaries (n + 1 per line) of every line.
        let mut z_len = 1;
        for (k, w) in squared.iter().enumerate() {
            let target = if k + 1 == rank && !indices {
                self.output.clone()
            } else {
                scratch.get(k % 2).cloned().ok_or_else(|| Error::invalid("DistanceTransform", "scratch"))?
            };
            let axis = (3 - rank + k) as i32;
            let n = shape.get(shape.len() - rank + k).copied().unwrap_or(1).max(1);
            z_len = z_len.max(count / n * (n + 1));
            let view = pass_view(self.name(), &source, &target, rank)?;
            let [even, odd] = features.clone();
            passes.push(Pass {
                source: source.clone(),
                target: target.clone(),
                axis,
                first: i32::from(k == 0),
                w: *w,
                view,
                features: if k % 2 == 0 { [odd, even] } else { [even, odd] },
            });
            source = target;
        }
        let v = XData::<T>::uninit(&app, self.name(), &[count.max(1)])?;
        let z = XData::<T>::uninit(&app, self.name(), &[z_len])?;
        let index = index_type_for(&[self.input.layout(), self.output.layout(), z.layout()], &[z_len as u64]);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("morphology.cl", &kernels::with_common(kernels::MORPHOLOGY), &options)?;
        let kernel = program.kernel("edt_line")?.owned_by(self.name());
        let finish = if indices {
            let last =
                features.get((rank + 1) % 2).cloned().ok_or_else(|| Error::invalid("DistanceTransform", "features"))?;
            let kernel = program.kernel("feature_indices")?.owned_by(self.name());
            Finish::Indices { kernel, features: last, components: self.components(rank)? }
        } else {
            let mut root = Elementwise::new(&[&self.output], &self.output, Expr::input(0).sqrt());
            root.init()?;
            Finish::Root(Box::new(root))
        };
        self.plan.set(Plan { kernel, passes, v, z, finish, index });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("DistanceTransform")?;
        let idx = plan.index;
        let track = i32::from(matches!(plan.finish, Finish::Indices { .. }));
        for pass in &plan.passes {
            let PassView { extents: e, source: sx, target: sy } = pass.view;
            let n = e.get(pass.axis as usize + 1).copied().unwrap_or(1).max(1);
            let lines = e.iter().product::<usize>() / n;
            let groups = lines.div_ceil(GROUP).clamp(1, MAX_GROUPS);
            let [read, written] = &pass.features;
            let mut l = plan.kernel.launch().input("x", &pass.source).index("x0", idx, pass.source.offset() as u64);
            l = indices(l, idx, X_STRIDES, &sx);
            l = l.output("y", &pass.target).index("y0", idx, pass.target.offset() as u64);
            l = indices(l, idx, Y_STRIDES, &sy);
            indices(l, idx, EXTENTS, &e)
                .scalar("axis", pass.axis)
                .scalar("first", pass.first)
                .scalar("w", T::from_c64(Complex64::new(pass.w, 0.0)))
                .output("v", &plan.v)
                .output("z", &plan.z)
                .scalar("track", track)
                .input("fs", read)
                .output("fd", written)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .work((e.iter().product::<usize>() * 2 * std::mem::size_of::<T>()) as u64, 0)
                .enqueue()?;
        }
        match &mut plan.finish {
            Finish::Root(root) => root.launch(),
            Finish::Indices { kernel, features, components } => {
                let count = plan.passes.first().map_or(1, |p| p.view.extents.iter().product::<usize>());
                for c in components {
                    kernel
                        .launch()
                        .input("features", features)
                        .output("y", &c.target)
                        .index("y0", idx, c.target.offset() as u64)
                        .index("count", idx, count as u64)
                        .index("stride", idx, c.stride)
                        .index("extent", idx, c.extent)
                        .scalar("own", c.own)
                        .scalar("none_value", c.none_value)
                        .global(&[count.div_ceil(GROUP).max(1) * GROUP])
                        .local(&[GROUP])
                        .work((count * (4 + std::mem::size_of::<T>())) as u64, 0)
                        .enqueue()?;
                }
                Ok(())
            }
        }
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
