//! [`DistanceTransform`]: scipy.ndimage.distance_transform_edt — the exact Euclidean distance from every non-zero
//! element to the nearest zero element, with a voxel spacing per axis (`sampling`), computed one axis at a time
//! (Felzenszwalb and Huttenlocher's lower envelope of parabolas, `kernels/morphology.cl`) and finished by one
//! element-wise square root.

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
/// one per axis, default 1 — for a scan, its voxel size) and the axes spanned (the last `rank`; default every
/// axis up to three).
///
/// ```
/// use cliper::DistanceParams;
/// let p = DistanceParams::default().sampling(&[2.5, 0.8, 0.8]);
/// assert_eq!(p.sampling, vec![2.5, 0.8, 0.8]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DistanceParams {
    /// The spacing along each axis.
    pub sampling: Vec<f64>,
    /// The axes spanned, the last ones.
    pub rank: Option<usize>,
}

impl Default for DistanceParams {
    fn default() -> DistanceParams {
        DistanceParams { sampling: vec![1.0], rank: None }
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
/// ```
/// use cliper::{ClApp, DistanceParams, DistanceTransform, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 3], &[0.0f64, 1.0, 1.0, 1.0, 1.0, 1.0])?;
/// let d = DistanceTransform::apply(&x, DistanceParams::default().sampling(&[2.0, 1.0]))?.to_vec()?;
/// assert_eq!(d, vec![0.0, 1.0, 2.0, 2.0, 5f64.sqrt(), 8f64.sqrt()]);
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
}

struct Plan<T: RealElement> {
    kernel: Kernel,
    passes: Vec<Pass<T>>,
    v: XData<T>,
    z: XData<T>,
    root: Elementwise<T, T>,
    index: IndexType,
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

    /// The output shape: the input's (after checking the spacing against it).
    ///
    /// ```
    /// use cliper::{DistanceParams, DistanceTransform};
    /// assert_eq!(DistanceTransform::<f32>::output_shape(&[4, 5], &DistanceParams::default())?, vec![4, 5]);
    /// let e = DistanceTransform::<f32>::output_shape(&[4, 5], &DistanceParams::default().sampling(&[1.0, 2.0, 3.0]));
    /// assert!(e.is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &DistanceParams) -> Result<Vec<usize>> {
        params.resolve(input.len())?;
        Ok(input.to_vec())
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<DistanceStrategy> {
        self.plan.as_ref().map(|p| DistanceStrategy { passes: p.passes.len() })
    }
}

impl<T: RealElement> Process for DistanceTransform<T> {
    fn name(&self) -> &str {
        "distance_transform_edt"
    }

    fn init(&mut self) -> Result<()> {
        let shape = self.input.shape().to_vec();
        if self.output.shape() != shape.as_slice() {
            return Err(Error::shape_because(self.name(), &shape, self.output.shape(), "the input's shape"));
        }
        let (rank, squared) = self.params.resolve(shape.len())?;
        let app = self.input.app().clone();
        let count: usize = shape.iter().product();
        // Passes ping-pong between two scratch arrays (a pass reads its source's other elements while writing);
        // the last writes the output.
        let scratch = [XData::<T>::uninit(&app, self.name(), &shape)?, XData::<T>::uninit(&app, self.name(), &shape)?];
        let mut passes = Vec::with_capacity(rank);
        let mut source = self.input.clone();
        // Scratch per pass: the sites (n per line) and boundaries (n + 1 per line) of every line.
        let mut z_len = 1;
        for (k, w) in squared.iter().enumerate() {
            let target = if k + 1 == rank {
                self.output.clone()
            } else {
                scratch.get(k % 2).cloned().ok_or_else(|| Error::invalid("DistanceTransform", "scratch"))?
            };
            let axis = (3 - rank + k) as i32;
            let n = shape.get(shape.len() - rank + k).copied().unwrap_or(1).max(1);
            z_len = z_len.max(count / n * (n + 1));
            let view = pass_view(self.name(), &source, &target, rank)?;
            passes.push(Pass {
                source: source.clone(),
                target: target.clone(),
                axis,
                first: i32::from(k == 0),
                w: *w,
                view,
            });
            source = target;
        }
        let v = XData::<T>::uninit(&app, self.name(), &[count.max(1)])?;
        let z = XData::<T>::uninit(&app, self.name(), &[z_len])?;
        let index = index_type_for(&[self.input.layout(), self.output.layout(), z.layout()], &[z_len as u64]);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("morphology.cl", &kernels::with_common(kernels::MORPHOLOGY), &options)?;
        let kernel = program.kernel("edt_line")?.owned_by(self.name());
        let mut root = Elementwise::new(&[&self.output], &self.output, Expr::input(0).sqrt());
        root.init()?;
        self.plan.set(Plan { kernel, passes, v, z, root, index });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let plan = self.plan.get("DistanceTransform")?;
        let idx = plan.index;
        for pass in &plan.passes {
            let PassView { extents: e, source: sx, target: sy } = pass.view;
            let n = e.get(pass.axis as usize + 1).copied().unwrap_or(1).max(1);
            let lines = e.iter().product::<usize>() / n;
            let groups = lines.div_ceil(GROUP).clamp(1, MAX_GROUPS);
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
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .work((e.iter().product::<usize>() * 2 * std::mem::size_of::<T>()) as u64, 0)
                .enqueue()?;
        }
        plan.root.launch()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
