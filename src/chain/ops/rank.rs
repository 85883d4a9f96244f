//! Rank filters and grey morphology (the rank family): scipy.ndimage's median, minimum, maximum, percentile and
//! rank filters and its grey erosion, dilation, opening, closing, gradient, Laplace and top-hats, each spelled as
//! one of the two operations `rank-filter` and `grey-morphology` — and scipy's generic_filter with numpy's
//! reductions (`generic-filter`).

use super::operation::{Named, Operation, Planned, Shortcut, fixed_shortcut, real_only, refuse_colour_rank, spanned};
use super::params::{FootprintArgs, by_name};
use super::reach::Reach;
use super::reach::{no_wrap, window_extent};
use crate::Result;
use crate::chain::any_data::{AnyData, FileSpec, Kind};
use crate::prelude::*;
use serde::Deserialize;

/// The rules of an operation over one window (`self.window`, a [`FootprintArgs`]) that `rank-filter` and
/// `generic-filter` share: the window's halo (no wrap border across tiles), the axes it spans, colour refused
/// unless the rank is given, the footprint file.
macro_rules! window_rules {
    () => {
        fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
            let w = &self.window;
            no_wrap(Self::NAME, shape, w.border.border())?;
            Reach::halo(window_extent(&w.size.0, &[&w.footprint], &w.origin)?)
        }
        fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
            self.window.footprint.is_none().then_some(&mut self.window.rank)
        }
        fn for_colour(&self, shape: &[usize]) -> Result<Self> {
            refuse_colour_rank(Self::NAME, self.window.rank, shape)?;
            Ok(self.clone())
        }
        fn files(&self) -> Vec<(&'static str, &str)> {
            self.window.footprint.iter().map(|f| ("footprint", f.as_str())).collect()
        }
    };
}

/// scipy.ndimage.rank_filter: the INDEX-th smallest under the window (negative counts from the largest), or a
/// filter by name (median, minimum, maximum, percentile:P, rank:R).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'rank-filter'\nfilter = 'median'")?;
/// assert_eq!(step.name(), "rank-filter");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper rank-filter data/phantom_256.png out/r.tif --index -2 --size 3")]
pub struct RankFilterArgs {
    /// The rank, 0-based; -1 is the largest (scipy's `rank`).
    #[arg(long, allow_negative_numbers = true, conflicts_with = "filter")]
    #[serde(default)]
    pub index: Option<isize>,
    /// The filter by name instead: median, minimum, maximum, percentile:P or rank:R.
    #[arg(long)]
    #[serde(default, deserialize_with = "super::params::maybe_by_name")]
    pub filter: Option<RankKind>,
    /// The window (footprint).
    #[command(flatten)]
    #[serde(flatten)]
    pub window: FootprintArgs,
}

impl RankFilterArgs {
    /// The filter of `kind` over `window`.
    fn of(kind: RankKind, window: FootprintArgs) -> RankFilterArgs {
        RankFilterArgs { index: None, filter: Some(kind), window }
    }

    fn kind(&self) -> Result<RankKind> {
        match (self.filter, self.index) {
            (Some(kind), None) => Ok(kind),
            (None, Some(index)) => Ok(RankKind::Rank(index)),
            _ => Err(Error::invalid(
                Self::NAME,
                "give the rank (--index R; `index = R` in a pipeline) or the filter (median, minimum, maximum, \
                 percentile:P, rank:R), one of them",
            )),
        }
    }
}

impl Named for RankFilterArgs {
    const NAME: &'static str = "rank-filter";
    fn check(&self) -> Result<()> {
        self.kind().map(|_| ())
    }
}

impl Operation for RankFilterArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = rank_params(self.kind()?, &self.window, x.shape())?;
        let needs = "real data (a rank needs ordered values)";
        real_only(Self::NAME, x, needs, |x| rank_filter(x, params.clone()), |x| rank_filter(x, params.clone()))
    }
    window_rules!();
}

/// The structuring element of grey morphology: the window (flat), or non-flat values.
///
/// ```
/// use cliper::chain::{GreyMorphologyArgs, Op};
/// let Op::GreyMorphology(GreyMorphologyArgs { element, .. }) = toml::from_str("op = 'grey-erosion'\nsize = 5")? else { unreachable!() };
/// assert_eq!((element.window.size.0, element.structure), (vec![5], None));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Default, Deserialize, clap::Args)]
pub struct GreyStructureArgs {
    /// The window (footprint).
    #[command(flatten)]
    #[serde(flatten)]
    pub window: FootprintArgs,
    /// A non-flat structuring element: a file of values (scipy's `structure`), added in dilation and subtracted
    /// in erosion; its box is the footprint unless --footprint is given.
    #[arg(long)]
    #[serde(default)]
    pub structure: Option<String>,
}

/// Grey morphology with a flat or non-flat structuring element: scipy.ndimage's grey_erosion, grey_dilation,
/// grey_opening, grey_closing, morphological_gradient, morphological_laplace, white_tophat and black_tophat.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'grey-morphology'\noperation = 'opening'")?;
/// assert_eq!(step.name(), "grey-morphology");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper grey-morphology data/phantom_256.png out/opened.png --operation opening --size 5"
)]
pub struct GreyMorphologyArgs {
    /// erosion, dilation, opening, closing, gradient, laplace, white-tophat or black-tophat (scipy's names work
    /// too: morphological_gradient, white_tophat, …).
    #[arg(long)]
    #[serde(deserialize_with = "by_name")]
    pub operation: GreyOp,
    /// The structuring element.
    #[command(flatten)]
    #[serde(flatten)]
    pub element: GreyStructureArgs,
}

impl Named for GreyMorphologyArgs {
    const NAME: &'static str = "grey-morphology";
}

impl Operation for GreyMorphologyArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let GreyStructureArgs { window, structure } = &self.element;
        let mut params = rank_params(RankKind::Minimum, window, x.shape())?;
        if let Some(file) = structure {
            let spec = FileSpec::parse(file);
            let host = spec.read()?.array;
            let values = host.to_elements::<f64>(&spec.path)?;
            if window.rank.is_none() && window.footprint.is_none() {
                params.rank = Some(host.shape().len());
            }
            params = params.structure(host.shape(), &values.iter().copied().collect::<Vec<_>>())?;
        }
        let grey = GreyParams { op: self.operation, window: params };
        let needs = "real data (a rank needs ordered values)";
        real_only(Self::NAME, x, needs, |x| grey_morphology(x, grey.clone()), |x| grey_morphology(x, grey.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        let GreyStructureArgs { window: w, structure } = &self.element;
        no_wrap(Self::NAME, shape, w.border.border())?;
        // Openings and closings are two passes; gradients, Laplaces and top-hats one or two.
        Reach::halo(2 * window_extent(&w.size.0, &[&w.footprint, structure], &w.origin)?)
    }
    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        let GreyStructureArgs { window, structure } = &mut self.element;
        (window.footprint.is_none() && structure.is_none()).then_some(&mut window.rank)
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        refuse_colour_rank(Self::NAME, self.element.window.rank, shape)?;
        Ok(self.clone())
    }
    fn files(&self) -> Vec<(&'static str, &str)> {
        let GreyStructureArgs { window, structure } = &self.element;
        let footprints = window.footprint.iter().map(|f| ("footprint", f.as_str()));
        footprints.chain(structure.iter().map(|f| ("structure", f.as_str()))).collect()
    }
}

/// scipy.ndimage.generic_filter with numpy's reduction FUNCTION over the window: sum, prod, mean, var, std,
/// min, max, ptp or median (numpy's rules: NaN propagates through min, max and median; var and std with ddof 0;
/// an even window's median averages its two middle values). The result has the input's type.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'generic-filter'\nfunction = 'std'\nsize = 5")?;
/// assert_eq!(step.name(), "generic-filter");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper generic-filter data/phantom_256.png out/local_std.tif --function std --size 5\n  cliper generic-filter ct.nii.gz out/local_range.nii.gz --function ptp --footprint ball.npy --border nearest"
)]
pub struct GenericFilterArgs {
    /// numpy's reduction applied to each window: sum, prod, mean, var, std, min, max, ptp or median.
    #[arg(long)]
    #[serde(deserialize_with = "by_name")]
    pub function: WindowFunction,
    /// The window (footprint).
    #[command(flatten)]
    #[serde(flatten)]
    pub window: FootprintArgs,
}

impl Named for GenericFilterArgs {
    const NAME: &'static str = "generic-filter";
}

impl Operation for GenericFilterArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params =
            GenericParams { function: self.function, window: rank_params(RankKind::Minimum, &self.window, x.shape())? };
        let needs = "real data (numpy's reductions here order or sum real values)";
        real_only(Self::NAME, x, needs, |x| generic_filter(x, params.clone()), |x| generic_filter(x, params.clone()))
    }
    window_rules!();
}

/// The rank-filter settings of a window for an input of `shape`.
fn rank_params(kind: RankKind, window: &FootprintArgs, shape: &[usize]) -> Result<RankParams> {
    let FootprintArgs { size, footprint, border, origin, rank } = window;
    let mut p = RankParams::new(kind).size(&size.0).border(border.border()).rank(spanned("rank-filter", *rank, shape)?);
    if let Some(origin) = origin {
        p = p.origin(origin);
    }
    if let Some(file) = footprint {
        let footprint = footprint_file(file)?;
        if rank.is_none() {
            p.rank = Some(footprint.shape().len());
        }
        p = p.footprint(footprint);
    }
    Ok(p)
}

/// A footprint or structure file (`ball.npy`, `w.mat:S`): its non-zero elements are in.
pub(super) fn footprint_file(file: &str) -> Result<Footprint> {
    let spec = FileSpec::parse(file);
    let host = spec.read()?.array;
    let values = host.to_elements::<f64>(&spec.path)?;
    Footprint::new(host.shape(), values.iter().map(|&v| v != 0.0).collect())
}

/// A rank filter of real data into a new output.
fn rank_filter<T: Kind + RealElement>(x: &XData<T>, params: RankParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), x.shape())?;
    RankFilter::<T>::output_shape(x.shape(), &params)?;
    Ok((Box::new(RankFilter::new(x, &y, params)), T::wrap(y)))
}

/// Grey morphology of real data into a new output.
fn grey_morphology<T: Kind + RealElement>(x: &XData<T>, params: GreyParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), x.shape())?;
    GreyMorphology::<T>::output_shape(x.shape(), &params)?;
    Ok((Box::new(GreyMorphology::new(x, &y, params)), T::wrap(y)))
}

/// generic_filter of real data into a new output.
fn generic_filter<T: Kind + RealElement>(x: &XData<T>, params: GenericParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), x.shape())?;
    GenericFilter::<T>::output_shape(x.shape(), &params)?;
    Ok((Box::new(GenericFilter::new(x, &y, params)), T::wrap(y)))
}

fixed_shortcut!(
    /// scipy.ndimage.median_filter.
    MedianArgs, "median" | "median-filter",
    "Examples:\n  cliper median ct.nii.gz out/ct_median.nii.gz --size 5\n  cliper median data/phantom_256.png out/m.png --size 7 --border nearest\n  cliper median ct.nii.gz out/m3.nii.gz --size 3 --rank 3",
    window: FootprintArgs => RankFilterArgs, |window| RankFilterArgs::of(RankKind::Median, window)
);
fixed_shortcut!(
    /// scipy.ndimage.minimum_filter.
    MinimumArgs, "minimum" | "minimum-filter",
    "Example: cliper minimum data/phantom_256.png out/min.tif --size 5",
    window: FootprintArgs => RankFilterArgs, |window| RankFilterArgs::of(RankKind::Minimum, window)
);
fixed_shortcut!(
    /// scipy.ndimage.maximum_filter.
    MaximumArgs, "maximum" | "maximum-filter",
    "Example: cliper maximum data/phantom_256.png out/max.tif --size 5",
    window: FootprintArgs => RankFilterArgs, |window| RankFilterArgs::of(RankKind::Maximum, window)
);

/// scipy.ndimage.percentile_filter.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'percentile'\npercentile = 90")?;
/// assert_eq!(step.name(), "rank-filter");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper percentile data/phantom_256.png out/p90.tif --percentile 90 --size 5")]
pub struct PercentileArgs {
    /// The percentile, 0 to 100 (negative counts from 100).
    #[arg(long, allow_negative_numbers = true)]
    pub percentile: f64,
    /// The window (footprint).
    #[command(flatten)]
    #[serde(flatten)]
    pub window: FootprintArgs,
}

impl Named for PercentileArgs {
    const NAME: &'static str = "percentile";
    const ALIASES: &'static [&'static str] = &["percentile-filter"];
}

impl Shortcut for PercentileArgs {
    type Target = RankFilterArgs;
    fn lower(self) -> Result<RankFilterArgs> {
        Ok(RankFilterArgs::of(RankKind::Percentile(self.percentile), self.window))
    }
}

fixed_shortcut!(
    /// scipy.ndimage.grey_erosion with a flat structuring element (size or footprint).
    GreyErosionArgs, "grey-erosion",
    "Example: cliper grey-erosion data/phantom_256.png out/eroded.png --size 15",
    element: GreyStructureArgs => GreyMorphologyArgs, |element| GreyMorphologyArgs { operation: GreyOp::Erosion, element }
);
fixed_shortcut!(
    /// scipy.ndimage.grey_dilation with a flat structuring element.
    GreyDilationArgs, "grey-dilation",
    "Example: cliper grey-dilation data/phantom_256.png out/dilated.png --size 15",
    element: GreyStructureArgs => GreyMorphologyArgs, |element| GreyMorphologyArgs { operation: GreyOp::Dilation, element }
);
fixed_shortcut!(
    /// scipy.ndimage.grey_opening (erosion, then dilation).
    GreyOpeningArgs, "grey-opening",
    "Example: cliper grey-opening data/phantom_256.png out/opened.png --size 5",
    element: GreyStructureArgs => GreyMorphologyArgs, |element| GreyMorphologyArgs { operation: GreyOp::Opening, element }
);
fixed_shortcut!(
    /// scipy.ndimage.grey_closing (dilation, then erosion).
    GreyClosingArgs, "grey-closing",
    "Example: cliper grey-closing data/phantom_256.png out/closed.png --size 5",
    element: GreyStructureArgs => GreyMorphologyArgs, |element| GreyMorphologyArgs { operation: GreyOp::Closing, element }
);
fixed_shortcut!(
    /// scipy.ndimage.morphological_gradient: dilation − erosion.
    MorphologicalGradientArgs, "morphological-gradient",
    "Example: cliper morphological-gradient data/phantom_256.png out/edges.png --size 3",
    element: GreyStructureArgs => GreyMorphologyArgs, |element| GreyMorphologyArgs { operation: GreyOp::Gradient, element }
);
fixed_shortcut!(
    /// scipy.ndimage.morphological_laplace: dilation + erosion − 2·input.
    MorphologicalLaplaceArgs, "morphological-laplace",
    "Example: cliper morphological-laplace img.npy out/laplace.npy --size 3",
    element: GreyStructureArgs => GreyMorphologyArgs, |element| GreyMorphologyArgs { operation: GreyOp::Laplace, element }
);
fixed_shortcut!(
    /// scipy.ndimage.white_tophat: input − opening (bright details smaller than the element).
    WhiteTophatArgs, "white-tophat",
    "Example: cliper white-tophat cells.tif out/spots.tif --size 15",
    element: GreyStructureArgs => GreyMorphologyArgs, |element| GreyMorphologyArgs { operation: GreyOp::WhiteTophat, element }
);
fixed_shortcut!(
    /// scipy.ndimage.black_tophat: closing − input (dark details smaller than the element).
    BlackTophatArgs, "black-tophat",
    "Example: cliper black-tophat vessels.nii.gz out/dark.nii.gz --size 5 --rank 3",
    element: GreyStructureArgs => GreyMorphologyArgs, |element| GreyMorphologyArgs { operation: GreyOp::BlackTophat, element }
);
