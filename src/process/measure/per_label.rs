//! [`Measure`]: scipy.ndimage's measurements of an image over labels, one table row per label.

use super::convex::{CONVEX_STRIDE, ConvexStep, RowOf, convex_areas_on_host};
use crate::app::ffi::{self, Region};
use crate::app::{DeviceKind, Kernel};
use crate::data::{HostCommand, Launch, XData};
use crate::element::RealElement;
use crate::error::{Error, Result};
use crate::kernel_args::IndexType;
use crate::kernels;
use crate::process::planning::index_type_for;
use crate::process::{Prepared, Process};
use rayon::prelude::*;
use std::str::FromStr;

/// Work-items per group.
const GROUP: usize = 64;
/// The largest label a label image may hold (as `kernels/measure.cl`'s MOST_LABEL): a row of accumulators each.
const MOST_LABEL: f64 = (1u64 << 28) as f64;
/// Doubles per row of the sums, ulongs of the extrema and of the boxes (`kernels/measure.cl`).
const ACC_STRIDE: usize = 15;
const KEY_STRIDE: usize = 4;
const BOX_STRIDE: usize = 6;
/// The sums' slots (`kernels/measure.cl`'s ACC_*).
const ACC_COUNT: usize = 0;
const ACC_SUM: usize = 1;
const ACC_SQUARES: usize = 2;
const ACC_COM: usize = 3;
const ACC_SHAPE: usize = 6;
/// Bits of the kernels' `flags`.
const WANT_SUMS: u32 = 1;
const WANT_COM: u32 = 2;
const WANT_EXTREMA: u32 = 4;
const WANT_BOX: u32 = 8;
const WANT_SQUARES: u32 = 16;
const WANT_POSITIONS: u32 = 32;
const WANT_SHAPE: u32 = 64;
/// Host-side bits: the moments pass (`measure_moments`), unweighted or also weighted by the image.
const WANT_MOMENTS: u32 = 128;
const WANT_WEIGHTED_MOMENTS: u32 = 256;
/// Host-side bit: the convex hulls' areas (`convex.rs`).
const WANT_CONVEX: u32 = 512;
/// Powers per axis of the moments (skimage's order 3: 0 to 3).
const MOMENT_POWERS: usize = 4;

/// One statistic of a [`Measure`], named as scipy.ndimage's function that computes it.
///
/// ```
/// use cliper::MeasureStat;
/// let stats = MeasureStat::parse_list("sum_labels,extrema,center_of_mass")?;
/// assert_eq!(stats.len(), 6); // extrema is minimum, maximum and their positions
/// assert_eq!(MeasureStat::CenterOfMass.columns(2), ["center_of_mass-0", "center_of_mass-1"]);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeasureStat {
    /// The number of elements (regionprops' area; scipy: `sum_labels` of ones).
    Count,
    /// `sum_labels`: the sum of the values.
    Sum,
    /// `mean`.
    Mean,
    /// `variance`: the mean squared deviation from the mean (scipy's, not divided by n − 1).
    Variance,
    /// `standard_deviation`: the variance's square root.
    StandardDeviation,
    /// `minimum` (NaN ignored, as scipy's sorted order puts it last; NaN only when every value is).
    Minimum,
    /// `maximum` (NaN when a value is NaN, as scipy's).
    Maximum,
    /// `minimum_position`: the index of the first minimum in C order, one column per axis.
    MinimumPosition,
    /// `maximum_position`: the index of the first maximum in C order, one column per axis.
    MaximumPosition,
    /// `center_of_mass`: the value-weighted mean index along each axis.
    CenterOfMass,
    /// `find_objects`: the bounding box, regionprops' `bbox` columns — the starts along each axis, then the stops
    /// (one past the end); NaN for a label with no element (scipy's `None`).
    Bbox,
    /// regionprops' `centroid`: the mean index of the region's elements (unweighted).
    Centroid,
    /// regionprops' `inertia_tensor` of the region (unweighted), `ndim × ndim` columns `inertia_tensor-i-j`.
    InertiaTensor,
    /// regionprops' `inertia_tensor_eigvals`: its eigenvalues, largest first, negative rounding clipped to 0.
    InertiaTensorEigvals,
    /// regionprops' `eccentricity` (2-D): √(1 − λ₂/λ₁) of the inertia tensor's eigenvalues (0 when λ₁ = 0).
    Eccentricity,
    /// regionprops' `orientation` (2-D): the angle between rows and the major axis, in (−π/2, π/2].
    Orientation,
    /// regionprops' `equivalent_diameter_area`: the diameter of the disc (2-D) or ball (3-D) of the same size.
    EquivalentDiameter,
    /// regionprops' `extent`: the region's size over its box's.
    Extent,
    /// regionprops' `moments`: Σ z^a·y^b·x^c over the region (a, b, c from 0 to 3, over the data's axes),
    /// coordinates from the box's first corner; `4^ndim` columns `moments-a-b(-c)`.
    Moments,
    /// regionprops' `moments_central`: the same about the region's centroid.
    MomentsCentral,
    /// regionprops' `moments_normalized`: μ / μ₀^((a+b+c)/ndim + 1), NaN where a + b + c < 2.
    MomentsNormalized,
    /// regionprops' `moments_hu` (2-D): Hu's seven invariants of the normalized moments.
    MomentsHu,
    /// regionprops' `moments_weighted`: the moments weighted by the image's values.
    MomentsWeighted,
    /// regionprops' `moments_weighted_central`: about the value-weighted centroid.
    MomentsWeightedCentral,
    /// regionprops' `moments_weighted_normalized`.
    MomentsWeightedNormalized,
    /// regionprops' `moments_weighted_hu` (2-D).
    MomentsWeightedHu,
    /// regionprops' `area_convex` (2-D and 3-D): the elements of the region's box whose centre lies in or on the
    /// convex hull of its elements each widened by ± ½ along each axis (skimage's `convex_hull_image`), counted
    /// exactly on the host; 0 for a 3-D region whose voxel centres are flat (one slice, a line, a plane at an
    /// angle: skimage's hull fails and is empty there).
    AreaConvex,
    /// regionprops' `solidity`: the area over `area_convex` (infinite where `area_convex` is 0, as skimage's).
    Solidity,
    /// regionprops' `feret_diameter_max` (2-D and 3-D): the longest distance between two points of the boundary
    /// skimage traces around the convex hull image (midpoints between its elements and their neighbours outside),
    /// exact up to one rounding of the square root; refused for a 3-D region whose voxel centres are flat (its
    /// hull image is empty: skimage's `marching_cubes` raises).
    FeretDiameterMax,
}

impl MeasureStat {
    /// Every statistic, in the order tables list them.
    pub const ALL: [MeasureStat; 29] = [
        MeasureStat::Count,
        MeasureStat::Sum,
        MeasureStat::Mean,
        MeasureStat::Variance,
        MeasureStat::StandardDeviation,
        MeasureStat::Minimum,
        MeasureStat::Maximum,
        MeasureStat::MinimumPosition,
        MeasureStat::MaximumPosition,
        MeasureStat::CenterOfMass,
        MeasureStat::Bbox,
        MeasureStat::Centroid,
        MeasureStat::InertiaTensor,
        MeasureStat::InertiaTensorEigvals,
        MeasureStat::Eccentricity,
        MeasureStat::Orientation,
        MeasureStat::EquivalentDiameter,
        MeasureStat::Extent,
        MeasureStat::Moments,
        MeasureStat::MomentsCentral,
        MeasureStat::MomentsNormalized,
        MeasureStat::MomentsHu,
        MeasureStat::MomentsWeighted,
        MeasureStat::MomentsWeightedCentral,
        MeasureStat::MomentsWeightedNormalized,
        MeasureStat::MomentsWeightedHu,
        MeasureStat::AreaConvex,
        MeasureStat::Solidity,
        MeasureStat::FeretDiameterMax,
    ];

    /// Its name: scipy.ndimage's function (`sum` for `sum_labels`, `bbox` for `find_objects`' boxes).
    pub fn name(self) -> &'static str {
        match self {
            MeasureStat::Count => "count",
            MeasureStat::Sum => "sum",
            MeasureStat::Mean => "mean",
            MeasureStat::Variance => "variance",
            MeasureStat::StandardDeviation => "standard_deviation",
            MeasureStat::Minimum => "minimum",
            MeasureStat::Maximum => "maximum",
            MeasureStat::MinimumPosition => "minimum_position",
            MeasureStat::MaximumPosition => "maximum_position",
            MeasureStat::CenterOfMass => "center_of_mass",
            MeasureStat::Bbox => "bbox",
            MeasureStat::Centroid => "centroid",
            MeasureStat::InertiaTensor => "inertia_tensor",
            MeasureStat::InertiaTensorEigvals => "inertia_tensor_eigvals",
            MeasureStat::Eccentricity => "eccentricity",
            MeasureStat::Orientation => "orientation",
            MeasureStat::EquivalentDiameter => "equivalent_diameter_area",
            MeasureStat::Extent => "extent",
            MeasureStat::Moments => "moments",
            MeasureStat::MomentsCentral => "moments_central",
            MeasureStat::MomentsNormalized => "moments_normalized",
            MeasureStat::MomentsHu => "moments_hu",
            MeasureStat::MomentsWeighted => "moments_weighted",
            MeasureStat::MomentsWeightedCentral => "moments_weighted_central",
            MeasureStat::MomentsWeightedNormalized => "moments_weighted_normalized",
            MeasureStat::MomentsWeightedHu => "moments_weighted_hu",
            MeasureStat::AreaConvex => "area_convex",
            MeasureStat::Solidity => "solidity",
            MeasureStat::FeretDiameterMax => "feret_diameter_max",
        }
    }

    /// scikit-image's `regionprops` property names this statistic computes, each with its statistic (`area` and
    /// `num_pixels` are the count; the intensity properties need an image).
    pub const REGIONPROPS: [(&'static str, MeasureStat); 26] = [
        ("area", MeasureStat::Count),
        ("num_pixels", MeasureStat::Count),
        ("bbox", MeasureStat::Bbox),
        ("centroid", MeasureStat::Centroid),
        ("centroid_weighted", MeasureStat::CenterOfMass),
        ("intensity_mean", MeasureStat::Mean),
        ("intensity_min", MeasureStat::Minimum),
        ("intensity_max", MeasureStat::Maximum),
        ("intensity_std", MeasureStat::StandardDeviation),
        ("equivalent_diameter_area", MeasureStat::EquivalentDiameter),
        ("inertia_tensor", MeasureStat::InertiaTensor),
        ("inertia_tensor_eigvals", MeasureStat::InertiaTensorEigvals),
        ("eccentricity", MeasureStat::Eccentricity),
        ("orientation", MeasureStat::Orientation),
        ("extent", MeasureStat::Extent),
        ("moments", MeasureStat::Moments),
        ("moments_central", MeasureStat::MomentsCentral),
        ("moments_normalized", MeasureStat::MomentsNormalized),
        ("moments_hu", MeasureStat::MomentsHu),
        ("moments_weighted", MeasureStat::MomentsWeighted),
        ("moments_weighted_central", MeasureStat::MomentsWeightedCentral),
        ("moments_weighted_normalized", MeasureStat::MomentsWeightedNormalized),
        ("moments_weighted_hu", MeasureStat::MomentsWeightedHu),
        ("area_convex", MeasureStat::AreaConvex),
        ("solidity", MeasureStat::Solidity),
        ("feret_diameter_max", MeasureStat::FeretDiameterMax),
    ];

    /// Whether it reads the image's values (without an image every value is 1).
    pub fn needs_image(self) -> bool {
        matches!(
            self,
            MeasureStat::Sum
                | MeasureStat::Mean
                | MeasureStat::Variance
                | MeasureStat::StandardDeviation
                | MeasureStat::Minimum
                | MeasureStat::Maximum
                | MeasureStat::MinimumPosition
                | MeasureStat::MaximumPosition
                | MeasureStat::CenterOfMass
                | MeasureStat::MomentsWeighted
                | MeasureStat::MomentsWeightedCentral
                | MeasureStat::MomentsWeightedNormalized
                | MeasureStat::MomentsWeightedHu
        )
    }

    /// Its table columns for data of `ndim` axes: its name, or `name-k` for each value of a vector (regionprops_table's
    /// naming).
    pub fn columns(self, ndim: usize) -> Vec<String> {
        let width = match self {
            MeasureStat::MinimumPosition
            | MeasureStat::MaximumPosition
            | MeasureStat::CenterOfMass
            | MeasureStat::Centroid
            | MeasureStat::InertiaTensorEigvals => ndim,
            MeasureStat::Bbox => 2 * ndim,
            MeasureStat::InertiaTensor => {
                return (0..ndim * ndim).map(|k| format!("{}-{}-{}", self.name(), k / ndim, k % ndim)).collect();
            }
            MeasureStat::Moments
            | MeasureStat::MomentsCentral
            | MeasureStat::MomentsNormalized
            | MeasureStat::MomentsWeighted
            | MeasureStat::MomentsWeightedCentral
            | MeasureStat::MomentsWeightedNormalized => {
                return (0..MOMENT_POWERS.pow(ndim as u32))
                    .map(|k| {
                        let powers = moment_powers(k, ndim).iter().map(|p| p.to_string()).collect::<Vec<_>>();
                        format!("{}-{}", self.name(), powers.join("-"))
                    })
                    .collect();
            }
            MeasureStat::MomentsHu | MeasureStat::MomentsWeightedHu => 7,
            _ => return vec![self.name().to_string()],
        };
        (0..width).map(|k| format!("{}-{k}", self.name())).collect()
    }

    /// A comma-separated list of names; `extrema` stands for minimum, maximum and their positions (scipy's
    /// `extrema`), `sum_labels` for sum and `find_objects` for bbox. Unknown names are refused, listing the known.
    pub fn parse_list(text: &str) -> Result<Vec<MeasureStat>> {
        let mut stats = Vec::new();
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if name == "extrema" {
                stats.extend([
                    MeasureStat::Minimum,
                    MeasureStat::Maximum,
                    MeasureStat::MinimumPosition,
                    MeasureStat::MaximumPosition,
                ]);
            } else {
                stats.push(name.parse()?);
            }
        }
        Ok(stats)
    }

    fn flags(self) -> u32 {
        match self {
            MeasureStat::Count | MeasureStat::Sum | MeasureStat::Mean => WANT_SUMS,
            MeasureStat::Variance | MeasureStat::StandardDeviation => WANT_SUMS | WANT_SQUARES,
            MeasureStat::Minimum | MeasureStat::Maximum => WANT_SUMS | WANT_EXTREMA,
            MeasureStat::MinimumPosition | MeasureStat::MaximumPosition => WANT_SUMS | WANT_EXTREMA | WANT_POSITIONS,
            MeasureStat::CenterOfMass => WANT_SUMS | WANT_COM,
            MeasureStat::Bbox | MeasureStat::Extent => WANT_SUMS | WANT_BOX,
            MeasureStat::EquivalentDiameter => WANT_SUMS,
            MeasureStat::Centroid
            | MeasureStat::InertiaTensor
            | MeasureStat::InertiaTensorEigvals
            | MeasureStat::Eccentricity
            | MeasureStat::Orientation => WANT_SUMS | WANT_BOX | WANT_SHAPE,
            MeasureStat::Moments
            | MeasureStat::MomentsCentral
            | MeasureStat::MomentsNormalized
            | MeasureStat::MomentsHu => WANT_SUMS | WANT_BOX | WANT_MOMENTS,
            MeasureStat::MomentsWeighted
            | MeasureStat::MomentsWeightedCentral
            | MeasureStat::MomentsWeightedNormalized
            | MeasureStat::MomentsWeightedHu => WANT_SUMS | WANT_BOX | WANT_MOMENTS | WANT_WEIGHTED_MOMENTS,
            MeasureStat::AreaConvex | MeasureStat::Solidity | MeasureStat::FeretDiameterMax => WANT_SUMS | WANT_CONVEX,
        }
    }
}

impl FromStr for MeasureStat {
    type Err = Error;
    fn from_str(text: &str) -> Result<MeasureStat> {
        let alias = match text {
            "sum_labels" => "sum",
            "find_objects" => "bbox",
            other => other,
        };
        MeasureStat::ALL.into_iter().find(|s| s.name() == alias).ok_or_else(|| {
            let known: Vec<&str> = MeasureStat::ALL.iter().map(|s| s.name()).collect();
            Error::invalid("measure", format!("unknown statistic `{text}`: {}, or extrema", known.join(", ")))
        })
    }
}

/// Which labels a [`Measure`] gives rows for: scipy's `index`.
///
/// ```
/// use cliper::{LabelRows, MeasureParams, MeasureStat};
/// let p = MeasureParams::new(&[MeasureStat::Mean], LabelRows::Labels(vec![3.0, 1.0]));
/// assert_eq!(p.rows.len(), 2); // one row each, in this order
/// assert_eq!(LabelRows::Positive.len(), 1); // scipy's index=None: every label > 0 as one region
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum LabelRows {
    /// A row for each of these labels, in order (whole numbers from 0; a label no element has gets scipy's values
    /// for it: a count of 0, a mean of NaN, a minimum of 0).
    Labels(Vec<f64>),
    /// One row for every element whose label is above 0, as one region (scipy's `index=None`).
    Positive,
}

impl LabelRows {
    /// How many rows.
    pub fn len(&self) -> usize {
        match self {
            LabelRows::Labels(labels) => labels.len(),
            LabelRows::Positive => 1,
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The settings of a [`Measure`]: the statistics (table columns, after the label) and the rows.
///
/// ```
/// use cliper::{LabelRows, MeasureParams, MeasureStat};
/// let p = MeasureParams::new(&[MeasureStat::Count, MeasureStat::CenterOfMass], LabelRows::Labels(vec![1.0, 2.0]));
/// assert_eq!(p.columns(2), ["label", "count", "center_of_mass-0", "center_of_mass-1"]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureParams {
    /// The statistics, in column order.
    pub stats: Vec<MeasureStat>,
    /// The labels measured.
    pub rows: LabelRows,
    /// The consecutive elements each work-item walks (default: 256 on a GPU, a sixteenth of a compute unit's
    /// share on a CPU). Runs of a label are split where chunks meet; tests set small chunks to cover that.
    pub chunk: Option<usize>,
}

impl MeasureParams {
    /// `stats` of the labels `rows` names.
    pub fn new(stats: &[MeasureStat], rows: LabelRows) -> MeasureParams {
        MeasureParams { stats: stats.to_vec(), rows, chunk: None }
    }

    /// The same with each work-item walking `chunk` elements (at least 1).
    pub fn chunk(mut self, chunk: usize) -> MeasureParams {
        self.chunk = Some(chunk.max(1));
        self
    }

    /// The table's columns for data of `ndim` axes: `label`, then each statistic's.
    pub fn columns(&self, ndim: usize) -> Vec<String> {
        std::iter::once("label".to_string()).chain(self.stats.iter().flat_map(|s| s.columns(ndim))).collect()
    }

    fn flags(&self) -> u32 {
        self.stats.iter().fold(WANT_SUMS, |f, s| f | s.flags())
    }

    /// Refuses what the kernels cannot measure: no statistic, more than three axes, a label that is not a whole
    /// number below 2^28.
    fn check(&self, shape: &[usize]) -> Result<()> {
        if self.stats.is_empty() {
            return Err(Error::invalid("measure", "no statistic asked for"));
        }
        if shape.is_empty() || shape.len() > 3 {
            return Err(Error::invalid("measure", format!("measures 1 to 3 axes; the data has shape {shape:?}")));
        }
        if let LabelRows::Labels(labels) = &self.rows
            && let Some(bad) = labels.iter().find(|l| !(**l >= 0.0 && l.fract() == 0.0 && **l < MOST_LABEL))
        {
            return Err(Error::invalid(
                "measure",
                format!("the label {bad} is not a whole number from 0 to 2^28 − 1 (the labels `label` writes)"),
            ));
        }
        if let Some(flat) = self.stats.iter().find(|s| {
            matches!(
                s,
                MeasureStat::Eccentricity
                    | MeasureStat::Orientation
                    | MeasureStat::MomentsHu
                    | MeasureStat::MomentsWeightedHu
            )
        }) && shape.len() != 2
        {
            return Err(Error::invalid(
                "measure",
                format!("{} is defined for 2-D regions (as skimage's); the data has shape {shape:?}", flat.name()),
            ));
        }
        if let Some(hull) = self.stats.iter().find(|s| s.flags() & WANT_CONVEX != 0)
            && shape.len() == 1
        {
            return Err(Error::invalid(
                "measure",
                format!(
                    "{} is defined for 2-D and 3-D regions (as skimage's); the data has shape {shape:?}",
                    hull.name()
                ),
            ));
        }
        if shape.iter().product::<usize>() as u64 >= u64::from(u32::MAX) {
            return Err(Error::Unsupported {
                what: format!("measure of shape {shape:?}: at most 2^32 − 1 elements")
            });
        }
        Ok(())
    }
}

/// How a [`Measure`] ran: its passes over the data and the elements each work-item walks.
///
/// ```
/// use cliper::{ClApp, LabelRows, Measure, MeasureParams, MeasureStat, Process, XData};
/// let app = ClApp::new()?;
/// let labels = XData::from_slice(&app, &[2, 3], &[1.0f32, 1.0, 0.0, 2.0, 2.0, 2.0])?;
/// let params = MeasureParams::new(&[MeasureStat::Variance], LabelRows::Labels(vec![1.0, 2.0]));
/// let out = XData::zeros(&app, &Measure::<f32>::output_shape(labels.shape(), &params)?)?;
/// let mut m = Measure::new(Some(&labels), &labels, &out, params);
/// m.init()?;
/// assert_eq!(m.strategy().unwrap().passes, 2); // the variance needs the mean first
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasureStrategy {
    /// Passes over the data: 1, or 2 when variances or positions need the first pass's sums or extrema.
    pub passes: usize,
    /// Consecutive elements per work-item (a run of one label costs one atomic update per accumulator).
    pub chunk: usize,
    /// The index type.
    pub index: IndexType,
}

impl std::fmt::Display for MeasureStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} pass(es), {} elements per work-item, double accumulators by atomics per run of a label ({} indices)",
            self.passes,
            self.chunk,
            self.index.cl_type()
        )
    }
}

/// scipy.ndimage's measurements of `image` over `labels` (same shape, 1 to 3 axes), as a table `[rows, columns]`
/// of doubles: a row per label of [`MeasureParams::rows`], the columns of [`MeasureParams::columns`] (the label,
/// then each statistic). Without an image, every value is 1: counts, unweighted centroids and boxes of the
/// labels themselves. Sums accumulate in double, as scipy's do (float32 results differ from scipy's only by the
/// order of the additions); a label absent from the data gets scipy's values for it (a count and sum of 0, a
/// mean, variance and centre of NaN, extrema and positions of 0, a box of NaN).
///
/// ```
/// use cliper::{ClApp, LabelRows, Measure, MeasureParams, MeasureStat, XData};
/// let app = ClApp::new()?;
/// let image = XData::from_slice(&app, &[2, 3], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// let labels = XData::from_slice(&app, &[2, 3], &[1.0f64, 1.0, 0.0, 2.0, 2.0, 2.0])?;
/// let stats = [MeasureStat::Mean, MeasureStat::MaximumPosition];
/// let table = Measure::apply(Some(&image), &labels, MeasureParams::new(&stats, LabelRows::Labels(vec![1.0, 2.0])))?;
/// assert_eq!(table.shape(), &[2, 4]); // label, mean, maximum_position-0, maximum_position-1
/// assert_eq!(table.to_vec()?, vec![1.0, 1.5, 0.0, 1.0, 2.0, 5.0, 1.0, 2.0]);
/// # Ok::<(), cliper::Error>(())
/// ```
pub struct Measure<T: RealElement> {
    image: Option<XData<T>>,
    labels: XData<T>,
    out: XData<f64>,
    params: MeasureParams,
    plan: Prepared<Plan>,
}

struct Plan {
    kernels: Kernels,
    state: State,
}

/// The kernels: clearing, the first pass, the second when asked for, and the moments' clearing and pass.
struct Kernels {
    clear: Kernel,
    sums: Kernel,
    second: Option<Kernel>,
    moments: Option<(Kernel, Kernel)>,
    pack: Kernel,
}

/// The accumulators, the label → row lookup and the launch's shape.
struct State {
    acc: XData<f64>,
    keys: XData<f64>,
    boxes: XData<f64>,
    /// Per row, the unweighted then the weighted moments (`2 · 4^ndim` doubles; one unused double without moments).
    moments: XData<f64>,
    /// Per row, the accumulators the table is made of (`slot_list`'s, in its order), gathered on the device so
    /// that only they cross to the host; `slots` is that list on the device (u32 bits).
    packed: XData<f64>,
    slots: XData<f32>,
    slot_list: Vec<u32>,
    /// Per row, `area_convex` and `feret_diameter_max` (one unused double without them), and what the host step
    /// that computes them measures.
    convex: XData<f64>,
    convex_step: Option<ConvexStep>,
    lookup: XData<f32>,
    lookup_len: u32,
    mode: u32,
    rows: usize,
    chunk: usize,
    /// The passes' work-group size: 1 on a CPU (PoCL runs a work-group on one core, and the passes have a few
    /// large items there), GROUP on a GPU.
    local: usize,
    index: IndexType,
}

impl<T: RealElement> Measure<T> {
    /// The measurements `params` describe of `image` (or of ones) over `labels` into `out` (of
    /// [`Measure::output_shape`]).
    pub fn new(image: Option<&XData<T>>, labels: &XData<T>, out: &XData<f64>, params: MeasureParams) -> Measure<T> {
        Measure { image: image.cloned(), labels: labels.clone(), out: out.clone(), params, plan: Prepared::default() }
    }

    /// Allocates the table, measures once and returns it.
    pub fn apply(image: Option<&XData<T>>, labels: &XData<T>, params: MeasureParams) -> Result<XData<f64>> {
        let out = XData::uninit(labels.app(), "measure", &Self::output_shape(labels.shape(), &params)?)?;
        Measure::new(image, labels, &out, params).run()?;
        Ok(out)
    }

    /// The table's shape for labels of `shape`: a row per label, a column per value.
    ///
    /// ```
    /// use cliper::{LabelRows, Measure, MeasureParams, MeasureStat};
    /// let p = MeasureParams::new(&[MeasureStat::Bbox], LabelRows::Labels(vec![1.0, 2.0, 5.0]));
    /// assert_eq!(Measure::<f32>::output_shape(&[30, 40, 50], &p)?, vec![3, 7]);
    /// assert!(Measure::<f32>::output_shape(&[2, 3, 4, 5], &p).is_err());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn output_shape(shape: &[usize], params: &MeasureParams) -> Result<Vec<usize>> {
        params.check(shape)?;
        Ok(vec![params.rows.len(), params.columns(shape.len()).len()])
    }

    /// The labels above 0 that `labels` holds, in increasing order (scipy's `numpy.unique(labels[labels > 0])`),
    /// read by two passes on the device. Refuses labels that are not whole numbers from 0 to 2^28 − 1, naming
    /// the first one and its index.
    ///
    /// ```
    /// use cliper::{ClApp, Measure, XData};
    /// let app = ClApp::new()?;
    /// let labels = XData::from_slice(&app, &[5], &[0.0f32, 7.0, 2.0, 7.0, 0.0])?;
    /// assert_eq!(Measure::present_labels(&labels)?, vec![2.0, 7.0]);
    /// let fractional = XData::from_slice(&app, &[2], &[1.0f32, 2.5])?;
    /// assert!(Measure::present_labels(&fractional).unwrap_err().to_string().contains("2.5"));
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn present_labels(labels: &XData<T>) -> Result<Vec<f64>> {
        if !labels.is_contiguous() {
            return Err(contiguous_refusal(labels.shape()));
        }
        let app = labels.app();
        let n = labels.len() as u64;
        if n >= u64::from(u32::MAX) {
            return Err(Error::Unsupported {
                what: format!("measure of shape {:?}: at most 2^32 − 1 elements", labels.shape()),
            });
        }
        let index = index_type_for(&[labels.layout()], &[n]);
        let program = measure_program::<T>(labels, index, "")?;
        let found = XData::from_slice(app, &[3], &[0.0f32, 0.0, f32::from_bits(u32::MAX)])?;
        if n > 0 {
            let groups = (labels.len().div_ceil(GROUP * 16)).clamp(1, 4096);
            program
                .kernel("measure_scan")?
                .owned_by("measure")
                .launch()
                .input("labels", labels)
                .index("l0", index, labels.offset() as u64)
                .index("n", index, n)
                .in_out("found", &found)
                .global(&[groups * GROUP])
                .local(&[GROUP])
                .enqueue()?;
        }
        let found: Vec<u32> = found.to_vec()?.iter().map(|w| w.to_bits()).collect();
        let &[largest, bad, first_bad] = found.as_slice() else {
            return Err(Error::invalid("measure", "the label scan returned no counts"));
        };
        if bad > 0 {
            let at = first_bad as usize;
            let value = labels.to_vec()?.get(at).map(|v| v.to_c64().re).unwrap_or(f64::NAN);
            return Err(Error::invalid(
                "measure",
                format!(
                    "{bad} label(s) are not whole numbers from 0 to 2^28 − 1, the first {value} at flat index {at} of \
                     shape {:?}: give the labels to measure (index)",
                    labels.shape()
                ),
            ));
        }
        let every: Vec<f64> = (0..=largest).map(f64::from).collect();
        let counts = Measure::apply(None, labels, MeasureParams::new(&[MeasureStat::Count], LabelRows::Labels(every)))?;
        let counts = counts.to_vec()?;
        let present = counts.chunks(2).filter_map(|row| match row {
            &[label, count] if label > 0.0 && count > 0.0 => Some(label),
            _ => None,
        });
        Ok(present.collect())
    }

    /// The passes `init` planned; `None` before `init`.
    pub fn strategy(&self) -> Option<MeasureStrategy> {
        self.plan.as_ref().map(|p| MeasureStrategy {
            passes: 1 + usize::from(p.kernels.second.is_some()),
            chunk: p.state.chunk,
            index: p.state.index,
        })
    }
}

fn contiguous_refusal(shape: &[usize]) -> Error {
    Error::Unsupported { what: format!("measure of a strided view of shape {shape:?}: give contiguous arrays") }
}

/// The measurement kernels, built with `defines` on top of the element and index types: none for the label scan,
/// `-DMEASURE_FLAGS=F` for passes specialised to what they accumulate, `-DMOMENT_AXES=N` for the moments pass.
fn measure_program<T: RealElement>(labels: &XData<T>, index: IndexType, defines: &str) -> Result<crate::app::Program> {
    labels.app().require::<f64>()?;
    // NVIDIA's L2 reductions on doubles and 64-bit integers (sm_60 on) replace the kernels' CAS loops.
    let hardware_reductions = matches!(labels.app().device().compute_capability, Some((major, _)) if major >= 6);
    let red = if hardware_reductions { " -DNV_RED" } else { "" };
    let options = format!("{} -DIDX={}{red}{defines}", T::build_options(), index.cl_type());
    labels.app().build_program("measure.cl", &kernels::with_common(kernels::MEASURE), &options)
}

/// Moments per row and weighting: `4^axes`.
fn moment_count(axes: usize) -> usize {
    MOMENT_POWERS.pow(axes as u32)
}

/// The powers (one per axis, first axis first) of the moment at flat index `k` of `axes` axes.
fn moment_powers(k: usize, axes: usize) -> Vec<usize> {
    (0..axes).rev().map(|a| (k / MOMENT_POWERS.pow(a as u32)) % MOMENT_POWERS).collect()
}

/// The inverse of the kernels' `ordered`: a double from its ordered bits.
fn from_ordered(key: u64) -> f64 {
    let bits = if key >> 63 == 1 { key & !(1 << 63) } else { !key };
    f64::from_bits(bits)
}

impl<T: RealElement> Process for Measure<T> {
    fn name(&self) -> &str {
        "measure"
    }

    fn init(&mut self) -> Result<()> {
        let labels = &self.labels;
        let shape = labels.shape().to_vec();
        let expected = Self::output_shape(&shape, &self.params)?;
        if self.out.shape() != expected {
            return Err(Error::shape_because("measure", &expected, self.out.shape(), "the table's shape"));
        }
        if let Some(image) = &self.image
            && image.shape() != labels.shape()
        {
            return Err(Error::shape_because("measure", labels.shape(), image.shape(), "the labels' shape"));
        }
        if !labels.is_contiguous() || self.image.as_ref().is_some_and(|i| !i.is_contiguous()) {
            return Err(contiguous_refusal(&shape));
        }
        if !self.out.is_contiguous() {
            return Err(Error::Unsupported { what: "measure into a strided view: give a contiguous table".into() });
        }
        let app = labels.app().clone();
        let n = labels.len();
        let index = index_type_for(&[labels.layout()], &[n as u64 + 1]);
        let flags = self.params.flags();
        let program = measure_program::<T>(labels, index, &format!(" -DMEASURE_FLAGS={flags}u"))?;
        let k = |name: &str| program.kernel(name).map(|k| k.owned_by("measure"));
        let (mode, lookup, lookup_len) = match &self.params.rows {
            LabelRows::Positive => (1, vec![-1i32], 1),
            LabelRows::Labels(labels) => {
                let len = labels.iter().fold(0.0f64, |m, &l| m.max(l + 1.0)) as usize;
                let mut lookup = vec![-1i32; len.max(1)];
                // Backwards, so that a label listed twice maps to its first row.
                for (row, &label) in labels.iter().enumerate().rev() {
                    if let Some(slot) = lookup.get_mut(label as usize) {
                        *slot = row as i32;
                    }
                }
                (2, lookup, len as u32)
            }
        };
        let feret = self.params.stats.contains(&MeasureStat::FeretDiameterMax);
        let convex_step =
            (flags & WANT_CONVEX != 0).then(|| ConvexStep { rows: RowOf { mode, lookup: lookup.clone() }, feret });
        let lookup: Vec<f32> = lookup.iter().map(|&r| f32::from_bits(r as u32)).collect();
        let rows = self.params.rows.len().max(1);
        let info = app.device();
        let (chunk, local) = if info.kind == DeviceKind::Cpu {
            (n.div_ceil((info.compute_units as usize * 16).max(1)).max(4096), 1)
        } else {
            (256, GROUP)
        };
        let chunk = self.params.chunk.unwrap_or(chunk);
        let kernels = Kernels {
            clear: k("measure_clear")?,
            sums: k("measure_sums")?,
            second: if flags & (WANT_SQUARES | WANT_POSITIONS | WANT_SHAPE) != 0 {
                Some(k("measure_second")?)
            } else {
                None
            },
            moments: if flags & WANT_MOMENTS != 0 {
                let program = measure_program::<T>(labels, index, &format!(" -DMOMENT_AXES={}", shape.len()))?;
                let k = |name: &str| program.kernel(name).map(|k| k.owned_by("measure"));
                Some((k("measure_zero")?, k("measure_moments")?))
            } else {
                None
            },
            pack: k("measure_pack")?,
        };
        let moment_values = if flags & WANT_MOMENTS != 0 { rows * 2 * moment_count(shape.len()) } else { 1 };
        let slots = packed_slots(flags, shape.len());
        let state = State {
            acc: XData::uninit(&app, "measure", &[rows * ACC_STRIDE])?,
            keys: XData::uninit(&app, "measure", &[rows * KEY_STRIDE])?,
            boxes: XData::uninit(&app, "measure", &[rows * BOX_STRIDE])?,
            moments: XData::uninit(&app, "measure", &[moment_values])?,
            packed: XData::uninit(&app, "measure", &[rows * slots.len()])?,
            slots: XData::from_slice(
                &app,
                &[slots.len()],
                &slots.iter().map(|&s| f32::from_bits(s)).collect::<Vec<_>>(),
            )?,
            slot_list: slots,
            convex: XData::uninit(&app, "measure", &[if convex_step.is_some() { rows * CONVEX_STRIDE } else { 1 }])?,
            convex_step,
            lookup: XData::from_slice(&app, &[lookup.len()], &lookup)?,
            lookup_len,
            mode,
            rows,
            chunk,
            local,
            index,
        };
        self.plan.set(Plan { kernels, state });
        Ok(())
    }

    fn launch(&mut self) -> Result<()> {
        let Plan { kernels, state } = self.plan.get("measure")?;
        let idx = state.index;
        let labels = &self.labels;
        let (image, has_image) = match &self.image {
            Some(image) => (image, 1i32),
            None => (labels, 0i32),
        };
        let shape = labels.shape();
        let n = labels.len() as u64;
        let flags = self.params.flags();
        kernels
            .clear
            .launch()
            .output("acc", &state.acc)
            .output("keys", &state.keys)
            .output("box", &state.boxes)
            .index("rows", idx, state.rows as u64)
            .global(&[state.rows.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .enqueue()?;
        let items = labels.len().div_ceil(state.chunk);
        let global = [items.div_ceil(state.local).max(1) * state.local];
        let bytes = (labels.len() * std::mem::size_of::<T>() * (1 + has_image as usize)) as u64;
        let [_, ny, nx] = padded_shape(shape);
        let data = Pass { image, labels, n, has_image, flags, ny: ny as u32, nx: nx as u32 };
        if n > 0 {
            data.args(kernels.sums.launch(), state).global(&global).local(&[state.local]).work(bytes, 0).enqueue()?;
            if let Some(second) = kernels.second.as_mut() {
                data.args(second.launch(), state).global(&global).local(&[state.local]).work(bytes, 0).enqueue()?;
            }
        }
        if let Some((zero, moments)) = kernels.moments.as_mut() {
            let count = state.moments.len();
            zero.launch()
                .output("a", &state.moments)
                .index("count", idx, count as u64)
                .global(&[count.div_ceil(GROUP) * GROUP])
                .local(&[GROUP])
                .enqueue()?;
            if n > 0 {
                let weighted = i32::from(flags & WANT_WEIGHTED_MOMENTS != 0 && has_image == 1);
                data.data_args(moments.launch(), state)
                    .scalar("weighted", weighted)
                    .input("box", &state.boxes)
                    .in_out("moments", &state.moments)
                    .scalar("ny", data.ny)
                    .scalar("nx", data.nx)
                    .global(&global)
                    .local(&[state.local])
                    .work(bytes, n * 2 * moment_count(shape.len()) as u64)
                    .enqueue()?;
            }
        }
        let per_row = state.slot_list.len();
        kernels
            .pack
            .launch()
            .input("acc", &state.acc)
            .input("keys", &state.keys)
            .input("box", &state.boxes)
            .input("moments", &state.moments)
            .scalar("moments_per_row", (2 * moment_count(shape.len())) as u32)
            .input("slots", &state.slots)
            .scalar("count", per_row as u32)
            .index("rows", idx, state.rows as u64)
            .output("packed", &state.packed)
            .global(&[state.rows.div_ceil(GROUP) * GROUP])
            .local(&[GROUP])
            .enqueue()?;
        if let Some(step) = &state.convex_step {
            convex_areas_on_host(labels, step, &state.convex)?;
        }
        table_on_host(state, &self.params, shape, &self.out)
    }

    fn is_initialized(&self) -> bool {
        self.plan.is_ready()
    }
}

/// What both passes over the data read: the image (the labels themselves when there is none), the labels and
/// what to accumulate.
struct Pass<'a, T: RealElement> {
    image: &'a XData<T>,
    labels: &'a XData<T>,
    n: u64,
    has_image: i32,
    flags: u32,
    /// The rows and columns of the data (its last two axes; 1 where it has fewer).
    ny: u32,
    nx: u32,
}

impl<T: RealElement> Pass<'_, T> {
    /// The arguments every pass over the data begins with, in their order: the data and the label → row lookup.
    fn data_args<'k>(&self, launch: Launch<'k>, state: &'k State) -> Launch<'k> {
        let idx = state.index;
        launch
            .input("x", self.image)
            .index("x0", idx, self.image.offset() as u64)
            .input("labels", self.labels)
            .index("l0", idx, self.labels.offset() as u64)
            .index("n", idx, self.n)
            .index("chunk", idx, state.chunk as u64)
            .scalar("mode", state.mode)
            .input("rows", &state.lookup)
            .scalar("lookup", state.lookup_len)
    }

    /// The arguments the sums and second passes take, in their order: the data, the lookup, the accumulators.
    fn args<'k>(&self, launch: Launch<'k>, state: &'k State) -> Launch<'k> {
        self.data_args(launch, state)
            .scalar("flags", self.flags)
            .scalar("has_image", self.has_image)
            .in_out("acc", &state.acc)
            .in_out("keys", &state.keys)
            .in_out("box", &state.boxes)
            .scalar("ny", self.ny)
            .scalar("nx", self.nx)
    }
}

/// The table from the packed accumulators, in a host command that maps them (the few doubles per label the
/// table is made of) and the table, whose every element it writes.
fn table_on_host(state: &State, params: &MeasureParams, shape: &[usize], out: &XData<f64>) -> Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    let reads = [
        Region { buffer: state.packed.storage().buffer(), lo: 0, hi: state.packed.len() },
        Region { buffer: state.convex.storage().buffer(), lo: 0, hi: state.convex.len() },
    ];
    let write = Region { buffer: out.storage().buffer(), lo: out.offset(), hi: out.offset() + out.len() };
    let inputs = [&state.packed, &state.convex];
    let bytes = ((inputs.iter().map(|x| x.len()).sum::<usize>() + out.len()) * 8) as u64;
    HostCommand::new::<f64, f64>("measure", "measure_table", &inputs, &[out])?.work(bytes, 0).run(|queue| {
        ffi::with_mapped_overwriting::<f64, f64, ()>(queue, &reads, &write, |read, table| {
            if let [packed, convex] = read {
                fill_table(params, shape, packed, &state.slot_list, convex, table);
            }
        })
        .map(|((), event)| event)
    })
}

/// The accumulator slots a table of `flags` over `ndim` axes is made of, as `measure_pack` numbers them: the
/// ACC_STRIDE sums, then the KEY_STRIDE keys, the BOX_STRIDE box bounds and the moments. The sums and bounds of
/// axes the data lacks (always 0) are left out.
fn packed_slots(flags: u32, ndim: usize) -> Vec<u32> {
    let missing_z = ndim < 3;
    let missing_y = ndim < 2;
    // Per slot of the sums and the box: whether it involves z, or y (zy, zx and yx involve both their axes).
    let (z, y) = (1u8, 2u8);
    let acc_axes: [u8; ACC_STRIDE] = [0, 0, 0, z, y, 0, z, y, 0, z, y, 0, z | y, z, y];
    let box_axes: [u8; BOX_STRIDE] = [z, y, 0, z, y, 0];
    let kept = |axes: u8| !(missing_z && axes & z != 0 || missing_y && axes & y != 0);
    let mut acc_slots = vec![ACC_COUNT, ACC_SUM];
    if flags & WANT_SQUARES != 0 {
        acc_slots.push(ACC_SQUARES);
    }
    if flags & WANT_COM != 0 {
        acc_slots.extend(ACC_COM..ACC_COM + 3);
    }
    if flags & WANT_SHAPE != 0 {
        acc_slots.extend(ACC_SHAPE..ACC_STRIDE);
    }
    let mut slots: Vec<u32> =
        acc_slots.into_iter().filter(|&a| acc_axes.get(a).is_some_and(|&axes| kept(axes))).map(|a| a as u32).collect();
    let keys = ACC_STRIDE as u32;
    if flags & WANT_EXTREMA != 0 {
        slots.extend([keys, keys + 1]);
    }
    if flags & WANT_POSITIONS != 0 {
        slots.extend([keys + 2, keys + 3]);
    }
    let boxes = keys + KEY_STRIDE as u32;
    if flags & WANT_BOX != 0 {
        slots.extend(
            (0..BOX_STRIDE).filter(|&b| box_axes.get(b).is_some_and(|&axes| kept(axes))).map(|b| boxes + b as u32),
        );
    }
    let moments = boxes + BOX_STRIDE as u32;
    let count = moment_count(ndim) as u32;
    if flags & WANT_MOMENTS != 0 {
        slots.extend(moments..moments + count);
    }
    if flags & WANT_WEIGHTED_MOMENTS != 0 {
        slots.extend(moments + count..moments + 2 * count);
    }
    slots
}

/// `shape` (1 to 3 axes) as [slices, rows, columns], 1 where it has fewer axes.
fn padded_shape(shape: &[usize]) -> [usize; 3] {
    let mut padded = [1; 3];
    for (slot, &extent) in padded.iter_mut().rev().zip(shape.iter().rev()) {
        *slot = extent;
    }
    padded
}

/// Writes each row of the table: the label, then every statistic's values from the row's accumulators.
fn fill_table(
    params: &MeasureParams,
    shape: &[usize],
    packed: &[f64],
    slots: &[u32],
    convex: &[f64],
    table: &mut [f64],
) {
    let width = params.columns(shape.len()).len().max(1);
    let labels: Vec<f64> = match &params.rows {
        LabelRows::Labels(labels) => labels.clone(),
        LabelRows::Positive => vec![f64::NAN],
    };
    let unpacked_len = ACC_STRIDE + KEY_STRIDE + BOX_STRIDE + 2 * moment_count(shape.len());
    let per_row = slots.len().max(1);
    // A label listed twice is accumulated in its first row only (the lookup maps it there): later rows read it.
    let mut first_row = std::collections::HashMap::new();
    let source: Vec<usize> =
        labels.iter().enumerate().map(|(row, label)| *first_row.entry(label.to_bits()).or_insert(row)).collect();
    // Rows are independent: spread over the host's cores (10⁵ labels' eigenvalues and moments add up), each
    // thread with one row's accumulators at their unpacked places (the slots not packed stay 0: not used).
    table.par_chunks_mut(width).zip(labels.par_iter()).zip(source.par_iter()).for_each_init(
        || vec![0.0f64; unpacked_len],
        |unpacked, ((line, &label), &from)| {
            let row = packed.get(from * per_row..(from + 1) * per_row).unwrap_or(&[]);
            for (&slot, &value) in slots.iter().zip(row) {
                if let Some(place) = unpacked.get_mut(slot as usize) {
                    *place = value;
                }
            }
            let hull = match convex.get(from * CONVEX_STRIDE..(from + 1) * CONVEX_STRIDE) {
                Some(&[area, feret]) => (area, feret),
                _ => (f64::NAN, f64::NAN),
            };
            fill_row(params, shape, label, unpacked, hull, line);
        },
    );
}

/// One table row: the label, then every statistic's values; every element is written (the host command does not
/// read the table first), NaN past what was computed. `hull`: the row's convex area and Feret diameter.
fn fill_row(params: &MeasureParams, shape: &[usize], label: f64, unpacked: &[f64], hull: (f64, f64), line: &mut [f64]) {
    let (acc, rest) = unpacked.split_at(ACC_STRIDE.min(unpacked.len()));
    let (keys, rest) = rest.split_at(KEY_STRIDE.min(rest.len()));
    let (boxes, moments) = rest.split_at(BOX_STRIDE.min(rest.len()));
    let mut values = line.iter_mut();
    if let Some(first) = values.next() {
        *first = label;
    }
    if let Some(mut sums) = RowSums::new(shape, acc, keys, boxes, moments) {
        (sums.area_convex, sums.feret_diameter) = hull;
        for stat in &params.stats {
            for value in sums.values(*stat) {
                if let Some(place) = values.next() {
                    *place = value;
                }
            }
        }
    }
    values.for_each(|place| *place = f64::NAN);
}

/// One row's accumulators, read back: what each statistic is made of. Vectors hold z, y, x; the data's axes are
/// the last `ndim` of them.
struct RowSums<'a> {
    ndim: usize,
    shape: [usize; 3],
    count: f64,
    sum: f64,
    squares: f64,
    /// The value-weighted coordinate sums.
    weighted: [f64; 3],
    /// The region's coordinate sums from its box's first corner, and their products: zz, yy, xx, zy, zx, yx.
    from_corner: [f64; 3],
    products: [f64; 6],
    /// The ordered bits of the minimum and maximum, the flat indices of their first occurrences.
    keys: [u64; 4],
    /// The box: first and last index along z, y, x.
    first: [f64; 3],
    last: [f64; 3],
    /// The moments (`4^ndim` unweighted, then as many weighted; zeros when not measured).
    moments: &'a [f64],
    /// The convex hull's area and Feret diameter (NaN when not measured).
    area_convex: f64,
    feret_diameter: f64,
}

impl<'a> RowSums<'a> {
    fn new(shape: &[usize], acc: &[f64], keys: &[f64], boxes: &[f64], moments: &'a [f64]) -> Option<RowSums<'a>> {
        let [count, sum, squares, wz, wy, wx, sz, sy, sx, zz, yy, xx, zy, zx, yx]: [f64; ACC_STRIDE] =
            acc.try_into().ok()?;
        let keys: [f64; KEY_STRIDE] = keys.try_into().ok()?;
        let [lz, ly, lx, hz, hy, hx]: [f64; BOX_STRIDE] = boxes.try_into().ok()?;
        let bound = |v: f64| v.to_bits() as f64;
        Some(RowSums {
            ndim: shape.len(),
            shape: padded_shape(shape),
            count,
            sum,
            squares,
            weighted: [wz, wy, wx],
            from_corner: [sz, sy, sx],
            products: [zz, yy, xx, zy, zx, yx],
            keys: keys.map(f64::to_bits),
            first: [lz, ly, lx].map(bound),
            last: [hz, hy, hx].map(bound),
            moments,
            area_convex: f64::NAN,
            feret_diameter: f64::NAN,
        })
    }

    fn present(&self) -> bool {
        self.count > 0.0
    }

    /// The data's axes of a z, y, x vector.
    fn axes<V: Copy>(&self, vector: [V; 3]) -> impl Iterator<Item = V> {
        vector.into_iter().skip(3 - self.ndim)
    }

    /// The values of `stat` (one, or one per column of it).
    fn values(&self, stat: MeasureStat) -> Vec<f64> {
        let (n, sum) = (self.count, self.sum);
        let [min_key, max_key, min_at, max_at] = self.keys;
        match stat {
            MeasureStat::Count => vec![n],
            MeasureStat::Sum => vec![sum],
            MeasureStat::Mean => vec![sum / n],
            MeasureStat::Variance => vec![self.squares / n],
            MeasureStat::StandardDeviation => vec![(self.squares / n).sqrt()],
            MeasureStat::Minimum => vec![self.extreme(min_key)],
            MeasureStat::Maximum => vec![self.extreme(max_key)],
            MeasureStat::MinimumPosition => self.position(min_at),
            MeasureStat::MaximumPosition => self.position(max_at),
            MeasureStat::CenterOfMass => self.axes(self.weighted).map(|w| w / sum).collect(),
            _ if !self.present() => vec![f64::NAN; stat.columns(self.ndim).len()],
            MeasureStat::Bbox => self.axes(self.first).chain(self.axes(self.last).map(|l| l + 1.0)).collect(),
            MeasureStat::Centroid => {
                let corner = self.axes(self.first).zip(self.axes(self.from_corner));
                corner.map(|(first, s)| first + s / n).collect()
            }
            MeasureStat::InertiaTensor => self.inertia_tensor().into_iter().flatten().collect(),
            MeasureStat::InertiaTensorEigvals => symmetric_eigenvalues(&self.inertia_tensor()),
            MeasureStat::Eccentricity => match symmetric_eigenvalues(&self.inertia_tensor()).as_slice() {
                &[l1, l2] if l1 != 0.0 => vec![(1.0 - l2 / l1).sqrt()],
                _ => vec![0.0],
            },
            MeasureStat::Orientation => vec![orientation(&self.inertia_tensor())],
            MeasureStat::EquivalentDiameter => {
                let d = self.ndim as f64;
                vec![(2.0 * d * n / std::f64::consts::PI).powf(1.0 / d)]
            }
            MeasureStat::Extent => {
                let box_size: f64 = self.axes(self.first).zip(self.axes(self.last)).map(|(f, l)| l + 1.0 - f).product();
                vec![n / box_size]
            }
            MeasureStat::Moments => self.raw_moments(false).to_vec(),
            MeasureStat::MomentsCentral => central_moments(self.raw_moments(false), self.ndim),
            MeasureStat::MomentsNormalized => {
                normalized_moments(&central_moments(self.raw_moments(false), self.ndim), self.ndim)
            }
            MeasureStat::MomentsHu => {
                hu_moments(&normalized_moments(&central_moments(self.raw_moments(false), self.ndim), self.ndim))
            }
            MeasureStat::MomentsWeighted => self.raw_moments(true).to_vec(),
            MeasureStat::MomentsWeightedCentral => central_moments(self.raw_moments(true), self.ndim),
            MeasureStat::MomentsWeightedNormalized => {
                normalized_moments(&central_moments(self.raw_moments(true), self.ndim), self.ndim)
            }
            MeasureStat::MomentsWeightedHu => {
                hu_moments(&normalized_moments(&central_moments(self.raw_moments(true), self.ndim), self.ndim))
            }
            MeasureStat::AreaConvex => vec![self.area_convex],
            MeasureStat::Solidity => vec![n / self.area_convex],
            MeasureStat::FeretDiameterMax => vec![self.feret_diameter],
        }
    }

    /// The moments about the box's first corner, unweighted or weighted by the image.
    fn raw_moments(&self, weighted: bool) -> &[f64] {
        let count = moment_count(self.ndim);
        let start = if weighted { count } else { 0 };
        self.moments.get(start..start + count).unwrap_or(&[])
    }

    /// A minimum or maximum from its ordered bits: 0 for an absent label (scipy's zeros), NaN when every value is.
    fn extreme(&self, key: u64) -> f64 {
        match (self.present(), key) {
            (false, _) => 0.0,
            (true, u64::MAX) => f64::NAN,
            (true, key) => from_ordered(key),
        }
    }

    /// The coordinates of a flat index (0s for an absent label, as scipy's).
    fn position(&self, flat: u64) -> Vec<f64> {
        let mut at: Vec<f64> = self.axes(self.shape).map(|_| 0.0).collect();
        if self.present() && flat != u64::MAX {
            let mut rest = flat;
            for (slot, extent) in at.iter_mut().rev().zip(self.axes(self.shape).collect::<Vec<_>>().into_iter().rev()) {
                *slot = (rest % extent as u64) as f64;
                rest /= extent as u64;
            }
        }
        at
    }

    /// skimage's inertia tensor of the region from its central second moments μ (sums over the region's elements
    /// from its centroid): diagonal (Σⱼ μⱼⱼ − μᵢᵢ)/n, off-diagonal −μᵢⱼ/n.
    fn inertia_tensor(&self) -> Vec<Vec<f64>> {
        let n = self.count;
        let [z, y, x] = self.from_corner;
        let [zz, yy, xx, zy, zx, yx] = self.products;
        let central = [
            [zz - z * z / n, zy - z * y / n, zx - z * x / n],
            [zy - z * y / n, yy - y * y / n, yx - y * x / n],
            [zx - z * x / n, yx - y * x / n, xx - x * x / n],
        ];
        let rows: Vec<Vec<f64>> = self.axes(central).map(|row| self.axes(row).collect()).collect();
        let diagonal: Vec<f64> = rows.iter().enumerate().filter_map(|(i, row)| row.get(i).copied()).collect();
        let trace: f64 = diagonal.iter().sum();
        rows.iter()
            .enumerate()
            .map(|(i, row)| {
                row.iter().enumerate().map(|(j, &mu)| if i == j { (trace - mu) / n } else { -mu / n }).collect()
            })
            .collect()
    }
}

/// skimage's moments_central from the moments `raw` about the box corner (`4^axes`, row-major over the powers):
/// the centroid is m(e_k)/m₀ along each axis, and (c − ĉ)^p = Σ_{q ≤ p} C(p, q)·(−ĉ)^{p − q}·c^q along each axis,
/// so the central moments are the raw ones transformed by that 4 × 4 triangle one axis at a time. The coordinates
/// are small (from the box corner, the centroid inside the box), so the expansion loses few digits.
fn central_moments(raw: &[f64], axes: usize) -> Vec<f64> {
    let count = moment_count(axes);
    if raw.len() != count {
        return vec![f64::NAN; count];
    }
    let total = raw.first().copied().unwrap_or(f64::NAN);
    let mut mu = raw.to_vec();
    for a in 0..axes {
        let stride = MOMENT_POWERS.pow((axes - 1 - a) as u32);
        // The centroid along axis a: the moment with power 1 on a alone, over m₀.
        let c = -raw.get(stride).copied().unwrap_or(f64::NAN) / total;
        let triangle = [
            [1.0, 0.0, 0.0, 0.0],
            [c, 1.0, 0.0, 0.0],
            [c * c, 2.0 * c, 1.0, 0.0],
            [c * c * c, 3.0 * c * c, 3.0 * c, 1.0],
        ];
        for base in (0..count).filter(|k| (k / stride).is_multiple_of(MOMENT_POWERS)) {
            let line: [f64; 4] = std::array::from_fn(|q| mu.get(base + q * stride).copied().unwrap_or(f64::NAN));
            for (p, row) in triangle.iter().enumerate() {
                if let Some(slot) = mu.get_mut(base + p * stride) {
                    *slot = row.iter().zip(&line).map(|(b, v)| b * v).sum();
                }
            }
        }
    }
    mu
}

/// The order (the sum of the powers) of the moment at flat index `k`.
fn moment_order(mut k: usize) -> usize {
    let mut order = 0;
    while k > 0 {
        order += k % MOMENT_POWERS;
        k /= MOMENT_POWERS;
    }
    order
}

/// skimage's moments_normalized: μ(p) / μ₀^(|p|/axes + 1) where |p| ≥ 2, NaN below.
fn normalized_moments(central: &[f64], axes: usize) -> Vec<f64> {
    let total = central.first().copied().unwrap_or(f64::NAN);
    central
        .iter()
        .enumerate()
        .map(|(k, &mu)| {
            let order = moment_order(k);
            if order < 2 { f64::NAN } else { mu / total.powf(order as f64 / axes as f64 + 1.0) }
        })
        .collect()
}

/// Hu's seven invariants of 2-D normalized moments ν (4 × 4, row-major: ν[p·4 + q]).
fn hu_moments(nu: &[f64]) -> Vec<f64> {
    let v = |p: usize, q: usize| nu.get(p * MOMENT_POWERS + q).copied().unwrap_or(f64::NAN);
    let (n20, n02, n11, n30, n03, n21, n12) = (v(2, 0), v(0, 2), v(1, 1), v(3, 0), v(0, 3), v(2, 1), v(1, 2));
    let (a, b) = (n30 + n12, n21 + n03);
    let (c, d) = (n30 - 3.0 * n12, 3.0 * n21 - n03);
    vec![
        n20 + n02,
        (n20 - n02).powi(2) + 4.0 * n11 * n11,
        c * c + d * d,
        a * a + b * b,
        c * a * (a * a - 3.0 * b * b) + d * b * (3.0 * a * a - b * b),
        (n20 - n02) * (a * a - b * b) + 4.0 * n11 * a * b,
        d * a * (a * a - 3.0 * b * b) - c * b * (3.0 * a * a - b * b),
    ]
}

/// skimage's orientation of a 2-D inertia tensor [[a, b], [b, c]]: ½·atan2(−2b, c − a), ±π/4 when a = c.
fn orientation(tensor: &[Vec<f64>]) -> f64 {
    let [first, second] = tensor else { return f64::NAN };
    let (&[a, b], &[_, c]) = (first.as_slice(), second.as_slice()) else { return f64::NAN };
    if a - c == 0.0 {
        if b < 0.0 { std::f64::consts::FRAC_PI_4 } else { -std::f64::consts::FRAC_PI_4 }
    } else {
        0.5 * (-2.0 * b).atan2(c - a)
    }
}

/// The eigenvalues of a symmetric 1×1, 2×2 or 3×3 matrix, largest first, negative rounding clipped to 0 (skimage's
/// `inertia_tensor_eigvals`): closed forms — the 3×3 by the trigonometric solution of its characteristic cubic.
fn symmetric_eigenvalues(m: &[Vec<f64>]) -> Vec<f64> {
    let rows: Vec<&[f64]> = m.iter().map(Vec::as_slice).collect();
    let mut values = match rows.as_slice() {
        [[a]] => vec![*a],
        [[a, b], [_, c]] => {
            let mid = 0.5 * (a + c);
            let radius = (0.25 * (a - c) * (a - c) + b * b).sqrt();
            vec![mid + radius, mid - radius]
        }
        [[a, b, c], [_, d, e], [_, _, f]] => {
            let off = b * b + c * c + e * e;
            if off == 0.0 {
                vec![*a, *d, *f]
            } else {
                let q = (a + d + f) / 3.0;
                let p = (((a - q).powi(2) + (d - q).powi(2) + (f - q).powi(2) + 2.0 * off) / 6.0).sqrt();
                // B = (M − qI)/p; its determinant gives the angle of the cubic's roots.
                let (b00, b01, b02, b11, b12, b22) = ((a - q) / p, b / p, c / p, (d - q) / p, e / p, (f - q) / p);
                let det = b00 * (b11 * b22 - b12 * b12) - b01 * (b01 * b22 - b12 * b02) + b02 * (b01 * b12 - b11 * b02);
                let phi = (det / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
                let first = q + 2.0 * p * phi.cos();
                let third = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
                vec![first, 3.0 * q - first - third, third]
            }
        }
        _ => Vec::new(),
    };
    values.iter_mut().for_each(|v| *v = v.max(0.0));
    values.sort_by(|a, b| b.total_cmp(a));
    values
}
