//! Measurements of labelled regions (the measure family): `measure`, scipy.ndimage's per-label statistics as a
//! table — a row per label, printed, or saved with `-o` as CSV, JSON or an array.

use super::operation::{Inputs, Named, Operation, Planned};
use super::params::List;
use super::reach::{Reach, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind};
use crate::prelude::*;
use serde::Deserialize;

fn default_stats() -> List<String> {
    List(vec!["count".into(), "sum".into(), "mean".into()])
}

/// scipy.ndimage's measurements of an image over a label image — `sum_labels`, `mean`, `variance`,
/// `standard_deviation`, `minimum`, `maximum`, `minimum_position`, `maximum_position`, `extrema`,
/// `center_of_mass`, `find_objects` (as regionprops' `bbox` columns) and `count` —, one row per label: every label
/// above 0 the labels hold, or those of `--index` in its order. Without an image, the labels' own counts,
/// centroids and boxes (every value 1).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'measure'\nstats = ['mean', 'center_of_mass']")?;
/// assert_eq!((step.name(), step.columns(2).unwrap().len()), ("measure", 4));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper measure out/labels.nii.gz data/mr_volume.nii.gz --stats count,mean,center_of_mass -o out/regions.csv\n  cliper measure out/labels.png --stats count,find_objects --index 1,2,5"
)]
#[serde(deny_unknown_fields)]
pub struct MeasureArgs {
    /// The statistics, comma-separated: count, sum (sum_labels), mean, variance, standard_deviation, minimum,
    /// maximum, minimum_position, maximum_position, extrema (the four), center_of_mass, bbox (find_objects).
    #[arg(long, default_value = "count,sum,mean")]
    #[serde(default = "default_stats")]
    pub stats: List<String>,
    /// The labels measured, in this order (scipy's index; default: every label above 0 present).
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub index: Option<Vec<f64>>,
}

impl MeasureArgs {
    fn stats(&self) -> Result<Vec<MeasureStat>> {
        MeasureStat::parse_list(&self.stats.0.join(","))
    }
}

impl Named for MeasureArgs {
    const NAME: &'static str = "measure";
    const INPUTS: Inputs = Inputs {
        names: &[("LABELS", "Label image (or directory/glob)"), ("IMAGE", "Image measured (default: every value 1)")],
        variadic: false,
        optional: true,
        prints: true,
    };
    fn check(&self) -> Result<()> {
        let rows = LabelRows::Labels(self.index.clone().unwrap_or_default());
        Measure::<f32>::output_shape(&[1], &MeasureParams::new(&self.stats()?, rows)).map(|_| ())
    }
}

/// The rules `measure` and `regionprops` share: a table of the whole image (no tiles), with no geometry, of a row
/// per label present unless `index` names them (then planned again for every file of a batch).
macro_rules! table_rules {
    () => {
        fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
            Err(whole(Self::NAME, shape, "a label's region can span every tile"))
        }
        fn geometry(&self, _g: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
            None
        }
        fn planes_stay(&self) -> bool {
            false
        }
        fn sized_by_data(&self) -> bool {
            self.index.is_none()
        }
    };
}

impl Operation for MeasureArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        plan_table(Self::NAME, inputs, &self.stats()?, &self.index)
    }
    table_rules!();
    fn columns(&self, ndim: usize) -> Option<Vec<String>> {
        let stats = self.stats().ok()?;
        Some(MeasureParams::new(&stats, LabelRows::Positive).columns(ndim))
    }
}

/// The [`Measure`] of `stats` over `inputs` (the labels, then optionally the image, of one element type): a row
/// per label of `index`, or per label above 0 present.
fn plan_table(op: &str, inputs: &[&AnyData], stats: &[MeasureStat], index: &Option<Vec<f64>>) -> Result<Planned> {
    fn typed<T: Kind + RealElement>(
        labels: &XData<T>,
        image: Option<&XData<T>>,
        stats: &[MeasureStat],
        index: &Option<Vec<f64>>,
    ) -> Result<Planned> {
        let rows = match index {
            Some(index) => index.clone(),
            None => Measure::present_labels(labels)?,
        };
        let params = MeasureParams::new(stats, LabelRows::Labels(rows));
        let table = XData::<f64>::zeros(labels.app(), &Measure::<T>::output_shape(labels.shape(), &params)?)?;
        Ok((Box::new(Measure::new(image, labels, &table, params)), f64::wrap(table)))
    }
    match inputs {
        [AnyData::F32(l)] => typed(l, None, stats, index),
        [AnyData::F64(l)] => typed(l, None, stats, index),
        [AnyData::F32(l), AnyData::F32(x)] => typed(l, Some(x), stats, index),
        [AnyData::F64(l), AnyData::F64(x)] => typed(l, Some(x), stats, index),
        [l, x] if l.kind() != x.kind() => Err(Error::Type {
            op: op.into(),
            expected: l.kind().name(),
            got: x.kind().name(),
            note: Some("the image: the labels and the image need one element type".into()),
        }),
        [first, ..] => {
            Err(Error::TypeRule { op: op.into(), rule: "measurements of real values".into(), got: first.kind().name() })
        }
        [] => Err(Error::invalid(op, "takes the labels, and optionally an image")),
    }
}

fn default_properties() -> List<String> {
    List(vec!["label".into(), "area".into(), "bbox".into(), "centroid".into()])
}

/// scikit-image's `regionprops_table` of a label image (and an intensity image): a row per label above 0 present
/// (or `--index`'s), the columns skimage names — `label`, `area`, `num_pixels`, `bbox-K`, `centroid-K`,
/// `centroid_weighted-K`, `intensity_mean`, `intensity_min`, `intensity_max`, `intensity_std`,
/// `equivalent_diameter_area`, `inertia_tensor-I-J`, `inertia_tensor_eigvals-K`, `eccentricity` and `orientation`
/// (2-D), `extent`, `moments-P-Q(-R)`, `moments_central`, `moments_normalized`, `moments_hu-K` (2-D) and their
/// `moments_weighted…` forms, `area_convex`, `solidity` and `feret_diameter_max` (2-D and 3-D) — in voxel units
/// (skimage's spacing 1). Computed by the same device passes as `measure` (and one more for the moments); the
/// convex hulls exactly on the host (area 0 and solidity inf for a 3-D region flat in a plane or on a line, as
/// skimage's empty hull gives; its Feret diameter refused, as skimage raises).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'regionprops'\nproperties = ['label', 'area', 'orientation']")?;
/// assert_eq!(step.columns(2).unwrap(), ["label", "area", "orientation"]);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper regionprops out/labels.png data/phantom_256.png --properties label,area,centroid,eccentricity,intensity_mean -o out/regions.csv"
)]
#[serde(deny_unknown_fields)]
pub struct RegionpropsArgs {
    /// skimage's property names, comma-separated: label, area, num_pixels, bbox, centroid, centroid_weighted,
    /// intensity_mean, intensity_min, intensity_max, intensity_std, equivalent_diameter_area, inertia_tensor,
    /// inertia_tensor_eigvals, eccentricity, orientation, extent, moments, moments_central, moments_normalized,
    /// moments_hu, moments_weighted, moments_weighted_central, moments_weighted_normalized, moments_weighted_hu,
    /// area_convex, solidity, feret_diameter_max.
    #[arg(long, default_value = "label,area,bbox,centroid")]
    #[serde(default = "default_properties")]
    pub properties: List<String>,
    /// The labels measured, in this order (default: every label above 0 present, as regionprops lists them).
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub index: Option<Vec<f64>>,
}

impl RegionpropsArgs {
    /// The statistics of the properties, with each one's column name prefix; `label` is the table's own first
    /// column. Unknown properties are refused, listing the known.
    fn properties(&self) -> Result<Vec<(&'static str, MeasureStat)>> {
        let names = self.properties.0.iter().flat_map(|p| p.split(',')).map(str::trim).filter(|p| !p.is_empty());
        names
            .filter(|p| *p != "label")
            .map(|name| {
                MeasureStat::REGIONPROPS.iter().find(|(known, _)| *known == name).copied().ok_or_else(|| {
                    let known: Vec<&str> = MeasureStat::REGIONPROPS.iter().map(|(n, _)| *n).collect();
                    Error::invalid(Self::NAME, format!("unknown property `{name}`: label, {}", known.join(", ")))
                })
            })
            .collect()
    }

    fn stats(&self) -> Result<Vec<MeasureStat>> {
        Ok(self.properties()?.into_iter().map(|(_, stat)| stat).collect())
    }
}

impl Named for RegionpropsArgs {
    const NAME: &'static str = "regionprops";
    const INPUTS: Inputs = Inputs {
        names: &[("LABELS", "Label image (or directory/glob)"), ("IMAGE", "Intensity image (for intensity_*)")],
        variadic: false,
        optional: true,
        prints: true,
    };
    fn check(&self) -> Result<()> {
        self.properties().map(|_| ())
    }
}

impl Operation for RegionpropsArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        // skimage has no intensity property without an intensity image (an AttributeError there).
        if let (Some((name, _)), [_]) = (self.properties()?.iter().find(|(_, s)| s.needs_image()), inputs) {
            return Err(Error::invalid(Self::NAME, format!("{name} needs an IMAGE to measure (after the labels)")));
        }
        plan_table(Self::NAME, inputs, &self.stats()?, &self.index)
    }
    table_rules!();
    fn columns(&self, ndim: usize) -> Option<Vec<String>> {
        let properties = self.properties().ok()?;
        let named = properties
            .iter()
            .flat_map(|(name, stat)| stat.columns(ndim).into_iter().map(move |c| c.replacen(stat.name(), name, 1)));
        Some(std::iter::once("label".to_string()).chain(named).collect())
    }
}
