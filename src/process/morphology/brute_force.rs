//! [`BruteForceDistance`]: scipy.ndimage.distance_transform_bf — each element's nearest zero element found by
//! comparing it with every element, one work-item per element (`kernels/morphology.cl`, `distance_bf`): scipy's
//! arithmetic and its choice among equally near zeros (the highest position), at the cost of elements² steps.

use crate::app::Kernel;
use crate::data::XData;
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::index_type_for;
use crate::process::{Prepared, Process};
use num_complex::Complex64;

const GROUP: usize = 64;

/// The distance a [`BruteForceDistance`] measures (scipy's `metric`).
///
/// ```
/// use cliper::{BruteForceMetric, BruteForceParams};
/// let p = BruteForceParams::new(BruteForceMetric::Chessboard);
/// assert_eq!(p.metric, BruteForceMetric::parse("chessboard")?);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BruteForceMetric {
    /// The Euclidean distance, with the spacing per axis.
    Euclidean,
    /// The sum of the steps along the axes (scipy's `taxicab`, `cityblock`, `manhattan`); no spacing.
    Taxicab,
    /// The largest step along an axis (`chessboard`); no spacing.
    Chessboard,
}

impl BruteForceMetric {
    /// scipy's names: `euclidean`, `taxicab` (or `cityblock`, `manhattan`), `chessboard`, any case.
    ///
    /// ```
    /// use cliper::BruteForceMetric;
    /// assert_eq!(BruteForceMetric::parse("Manhattan")?, BruteForceMetric::Taxicab);
    /// assert!(BruteForceMetric::parse("minkowski").is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn parse(name: &str) -> Result<BruteForceMetric> {
        match name.trim().to_lowercase().as_str() {
            "euclidean" => Ok(BruteForceMetric::Euclidean),
            "taxicab" | "cityblock" | "manhattan" => Ok(BruteForceMetric::Taxicab),
            "chessboard" => Ok(BruteForceMetric::Chessboard),
            other => Err(Error::invalid(
                "distance_transform_bf",
                format!("metric `{other}` is not euclidean, taxicab, cityblock, manhattan or chessboard"),
            )),
        }
    }

    /// What scipy gives an element without any zero to measure to: sqrt(DBL_MAX) (Euclidean, float64) or
    /// UINT_MAX (its uint32 distances).
    fn none_distance(self) -> f64 {
        match self {
            BruteForceMetric::Euclidean => f64::MAX.sqrt(),
            _ => f64::from(u32::MAX),
        }
    }
}

/// The settings of a [`BruteForceDistance`]: the metric, the spacing per axis (Euclidean only, as scipy: one for
/// every axis or one per axis) and whether the result is the distances or the indices of the nearest zeros.
///
/// ```
/// use cliper::{BruteForceMetric, BruteForceParams};
/// let p = BruteForceParams::new(BruteForceMetric::Euclidean).sampling(&[2.0, 1.0]).indices(true);
/// assert_eq!(p.sampling, vec![2.0, 1.0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BruteForceParams {
    /// The distance measured.
    pub metric: BruteForceMetric,
    /// The spacing along each axis (Euclidean only).
    pub sampling: Vec<f64>,
    /// The result is the index of each element's nearest zero element (a leading axis of one component per
    /// axis, whole numbers), not the distance.
    pub indices: bool,
}

impl BruteForceParams {
    /// The metric, spacing 1, distances.
    pub fn new(metric: BruteForceMetric) -> BruteForceParams {
        BruteForceParams { metric, sampling: vec![1.0], indices: false }
    }
    /// Sets the spacing (one, or one per axis).
    pub fn sampling(mut self, sampling: &[f64]) -> BruteForceParams {
        self.sampling = sampling.to_vec();
        self
    }
    /// Sets whether the result is the indices of the nearest zero elements instead of the distances.
    pub fn indices(mut self, indices: bool) -> BruteForceParams {
        self.indices = indices;
        self
    }

    /// The spacing of each of `ndim` axes (1 to 3), checked.
    fn resolve(&self, ndim: usize) -> Result<Vec<f64>> {
        let op = "distance_transform_bf";
        if !(1..=3).contains(&ndim) {
            return Err(Error::invalid(op, format!("spans 1 to 3 axes; the input has {ndim}")));
        }
        let sampling = match self.sampling.as_slice() {
            [one] => vec![*one; ndim],
            many if many.len() == ndim => many.to_vec(),
            many => {
                return Err(Error::invalid(
                    op,
                    format!("gives {} spacings for {ndim} axes: give one, or one per axis", many.len()),
                ));
            }
        };
        if let Some(bad) = sampling.iter().find(|s| !(**s > 0.0 && s.is_finite())) {
            return Err(Error::invalid(op, format!("spacings must be positive and finite, got {bad}")));
        }
        Ok(sampling)
    }
}

/// What a [`BruteForceDistance`] runs.
///
/// ```
/// use cliper::{BruteForceDistance, BruteForceMetric, BruteForceParams, ClApp, Process, XData};
/// let app = ClApp::new()?;
/// let x = XData::<f32>::zeros(&app, &[5, 6])?;
/// let mut p = BruteForceDistance::new(&x, &XData::zeros(&app, &[5, 6])?, BruteForceParams::new(BruteForceMetric::Taxicab));
/// p.init()?;
/// assert_eq!(p.strategy().unwrap().comparisons, 900);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BruteForceStrategy {
    /// Element pairs compared (elements²).
    pub comparisons: u64,
}

impl std::fmt::Display for BruteForceStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "brute force: {} element pairs, one work-item per element", self.comparisons)
    }
}

/// scipy.ndimage.distance_transform_bf of real data of 1 to 3 axes: each non-zero element's distance to the
/// nearest zero element (Euclidean with `sampling`, or taxicab or chessboard steps, whole numbers), zero elements
/// 0 — or with [`BruteForceParams::indices`] that zero element's index (shape `[ndim, ...shape]`), ties going to
/// the highest position as in scipy. Without any zero: sqrt(f64::MAX) (Euclidean) or u32::MAX, and index 0, as
/// scipy (float64 holds these; in float32 the first overflows to +inf and the second rounds to 2^32). Compares every pair of elements: elements² steps.
///
/// ```
/// use cliper::{BruteForceDistance, BruteForceMetric, BruteForceParams, ClApp, XData};
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 3], &[0.0f64, 1.0, 1.0, 1.0, 1.0, 0.0])?;
/// let d = BruteForceDistance::apply(&x, BruteForceParams::new(BruteForceMetric::Chessboard))?.to_vec()?;
/// assert_eq!(d, vec![0.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
/// // The middle of [0, 1, 0] is 1 step from both zeros: scipy takes the later, (0, 2).
/// let line = XData::from_slice(&app, &[1, 3], &[0.0f64, 1.0, 0.0])?;
/// let i = BruteForceDistance::apply(&line, BruteForceParams::new(BruteForceMetric::Taxicab).indices(true))?;
/// assert_eq!(i.to_vec()?, vec![0.0, 0.0, 0.0, 0.0, 2.0, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct BruteForceDistance<T: RealElement> {
    input: XData<T>,
    output: XData<T>,
    params: BruteForceParams,
    plan: Prepared<Plan>,
}

struct Plan {
    kernel: Kernel,
    /// The extents as [z, y, x] (leading ones where the input has fewer axes).
    extents: [usize; 3],
    sampling: [f64; 3],
    index: IndexType,
}

impl<T: RealElement> BruteForceDistance<T> {
    /// `output = distance_transform_bf(input)`.
    pub fn new(input: &XData<T>, output: &XData<T>, params: BruteForceParams) -> BruteForceDistance<T> {
        BruteForceDistance { input: input.clone(), output: output.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the output, runs once and returns it.
    pub fn apply(input: &XData<T>, params: BruteForceParams) -> Result<XData<T>> {
        let out = XData::uninit(input.app(), "BruteForceDistance", &Self::output_shape(input.shape(), &params)?)?;
        BruteForceDistance::new(input, &out, params).run()?;
        Ok(out)
    }

    /// The output shape: the input's, or with `indices` a leading axis of one component per axis before it.
    ///
    /// ```
    /// use cliper::{BruteForceDistance, BruteForceMetric, BruteForceParams};
    /// let p = BruteForceParams::new(BruteForceMetric::Euclidean).indices(true);
    /// assert_eq!(BruteForceDistance::<f32>::output_shape(&[4, 5], &p)?, vec![2, 4, 5]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(input: &[usize], params: &BruteForceParams) -> Result<Vec<usize>> {
        params.resolve(input.len())?;
        let most = if std::mem::size_of::<T>() == 4 { 1usize << 24 } else { i32::MAX as usize };
        if params.indices && input.iter().any(|&n| n > most) {
            return Err(Error::Unsupported {
                what: format!("the indices of shape {input:?} in {}: at most {most} along an axis", T::NAME),
            });
        }
        Ok(if params.indices { [&[input.len()], input].concat() } else { input.to_vec() })
    }

    /// What `init` planned; `None` before.
    pub fn strategy(&self) -> Option<BruteForceStrategy> {
        self.plan.as_ref().map(|p| {
            let n = p.extents.iter().product::<usize>() as u64;
            BruteForceStrategy { comparisons: n * n }
        })
    }
}

impl<T: RealElement> Process for BruteForceDistance<T> {
    fn name(&self) -> &str {
        "distance_transform_bf"
    }

    fn init(&mut self) -> Result<()> {
        let shape = self.input.shape().to_vec();
        let expected = Self::output_shape(&shape, &self.params)?;
        if self.output.shape() != expected.as_slice() {
            return Err(Error::shape_because(self.name(), &expected, self.output.shape(), "the input's shape"));
        }
        for (what, a) in [("input", &self.input), ("output", &self.output)] {
            if !a.is_contiguous() {
                return Err(Error::Unsupported {
                    what: format!(
                        "{} of an {what} view of shape {:?} and strides {:?}; make it contiguous first",
                        self.name(),
                        a.shape(),
                        a.strides()
                    ),
                });
            }
        }
        let sampling = self.params.resolve(shape.len())?;
        let (mut extents, mut spacing) = ([1usize; 3], [1.0f64; 3]);
        for (k, (&n, &s)) in shape.iter().zip(&sampling).enumerate() {
            let slot = 3 - shape.len() + k;
            if let (Some(e), Some(p)) = (extents.get_mut(slot), spacing.get_mut(slot)) {
                (*e, *p) = (n, s);
            }
        }
        let app = self.input.app().clone();
        let index = index_type_for(&[self.input.layout(), self.output.layout()], &[]);
        let options = format!("{} -DIDX={}", T::build_options(), index.cl_type());
        let program = app.build_program("morphology.cl", &kernels::with_common(kernels::MORPHOLOGY), &options)?;
        let kernel = program.kernel("distance_bf")?.owned_by(self.name());
        self.plan.set(Plan { kernel, extents, sampling: spacing, index });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let ndim = self.input.shape().len() as i32;
        let (metric, indices) = (self.params.metric, self.params.indices);
        let plan = self.plan.get("BruteForceDistance")?;
        let idx = plan.index;
        let [nz, ny, nx] = plan.extents;
        let count = nz * ny * nx;
        let real = |v: f64| T::from_c64(Complex64::new(v, 0.0));
        let [sz, sy, sx] = plan.sampling;
        let metric_code = match metric {
            BruteForceMetric::Euclidean => 0,
            BruteForceMetric::Taxicab => 1,
            BruteForceMetric::Chessboard => 2,
        };
        plan.kernel
            .launch()
            .input("x", &self.input)
            .index("x0", idx, self.input.offset() as u64)
            .index("count", idx, count as u64)
            .index("nz", idx, nz as u64)
            .index("ny", idx, ny as u64)
            .index("nx", idx, nx as u64)
            .scalar("ndim", ndim)
            .scalar("metric", metric_code)
            .scalar("sz", real(sz))
            .scalar("sy", real(sy))
            .scalar("sx", real(sx))
            .scalar("none_distance", real(metric.none_distance()))
            .scalar("want_indices", i32::from(indices))
            .output("y", &self.output)
            .index("y0", idx, self.output.offset() as u64)
            .global(&[count.div_ceil(GROUP).max(1) * GROUP])
            .local(&[GROUP])
            .work(
                (count * std::mem::size_of::<T>()) as u64,
                (count as u64).saturating_mul(count as u64).saturating_mul(6),
            )
            .enqueue()
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}
