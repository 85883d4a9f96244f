//! Binary morphology, labels and distances (the morphology family): scipy.ndimage's binary erosion, dilation,
//! opening and closing (spelled as `binary-morphology`), `label`, `binary_fill_holes`, `distance_transform_edt` and
//! `distance_transform_cdt` (with their `return_indices`); skimage's remove_small_objects, remove_small_holes and
//! skeletonize. None of them runs in tiles but a bounded number of binary steps: the others need the whole image.

use super::operation::{
    Named, Operation, Planned, colour_refusal, default_rank, fixed_shortcut, real_only, refuse_colour_rank, spanned,
    spatial_span,
};
use super::params::{by_name, maybe_by_name, one_count};
use super::rank::footprint_file;
use super::reach::Reach;
use super::reach::{whole, window_extent};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind};
use crate::prelude::*;
use serde::Deserialize;

/// The structure and repetitions of binary morphology.
///
/// ```
/// use cliper::chain::{BinaryMorphologyArgs, Op};
/// let Op::BinaryMorphology(BinaryMorphologyArgs { structure, .. }) = toml::from_str("op = 'binary-erosion'\niterations = 2")? else { unreachable!() };
/// assert_eq!(structure.iterations, 2);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
pub struct BinaryStructureArgs {
    /// Repetitions of each step; 0 repeats until nothing changes.
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one_count")]
    pub iterations: usize,
    /// A structure file (non-zero = in the structure; overrides --connectivity; its axes set --rank).
    #[arg(long)]
    #[serde(default)]
    pub structure: Option<String>,
    /// scipy's generate_binary_structure(rank, CONNECTIVITY): 1 (the cross) to rank (the full box).
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one_count")]
    pub connectivity: usize,
    /// The value outside the array: 0 or 1.
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub border_value: u8,
    /// The structure's shift (scipy's origin): one, or one per axis (-1,0).
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',')]
    #[serde(default)]
    pub origin: Option<Vec<isize>>,
    /// Axes spanned, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
}

/// Binary morphology (non-zero = true; the result 0/1): scipy.ndimage's binary_erosion, binary_dilation,
/// binary_opening and binary_closing.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'binary-morphology'\noperation = 'closing'")?;
/// assert_eq!(step.name(), "binary-morphology");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper binary-morphology mask.nii.gz out/opened.nii.gz --operation opening --iterations 2"
)]
pub struct BinaryMorphologyArgs {
    /// erosion, dilation, opening or closing.
    #[arg(long)]
    #[serde(deserialize_with = "by_name")]
    pub operation: MorphologyOp,
    /// The structure and its repetitions.
    #[command(flatten)]
    #[serde(flatten)]
    pub structure: BinaryStructureArgs,
}

impl Named for BinaryMorphologyArgs {
    const NAME: &'static str = "binary-morphology";
}

impl Operation for BinaryMorphologyArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let BinaryStructureArgs { iterations, structure, connectivity, border_value, origin, rank } = &self.structure;
        if *border_value > 1 {
            return Err(Error::invalid(Self::NAME, format!("border_value is 0 or 1, not {border_value}")));
        }
        let mut params = BinaryParams::new(self.operation)
            .iterations(*iterations)
            .connectivity(*connectivity)
            .border_value(*border_value == 1)
            .rank(spanned(Self::NAME, *rank, x.shape())?);
        if let Some(origin) = origin {
            params = params.origin(origin);
        }
        if let Some(file) = structure {
            let structure = footprint_file(file)?;
            if rank.is_none() {
                params.rank = Some(structure.shape().len());
            }
            params = params.structure(structure);
        }
        let needs = "real data (non-zero is true)";
        real_only(Self::NAME, x, needs, |x| binary(x, params.clone()), |x| binary(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        let BinaryStructureArgs { iterations, structure, origin, .. } = &self.structure;
        if *iterations == 0 {
            return Err(whole(Self::NAME, shape, "repeated until nothing changes (iterations = 0)"));
        }
        Reach::halo(2 * iterations * window_extent(&[3], &[structure], origin)?)
    }
    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        self.structure.structure.is_none().then_some(&mut self.structure.rank)
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        refuse_colour_rank(Self::NAME, self.structure.rank, shape)?;
        Ok(self.clone())
    }
    fn result_dtype(&self) -> Option<Dtype> {
        Some(Dtype::U8)
    }
    fn files(&self) -> Vec<(&'static str, &str)> {
        self.structure.structure.iter().map(|f| ("structure", f.as_str())).collect()
    }
}

/// Binary morphology of real data into a new 0/1 output.
fn binary<T: Kind + RealElement>(x: &XData<T>, params: BinaryParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &BinaryMorphology::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(BinaryMorphology::new(x, &y, params)), T::wrap(y)))
}

fixed_shortcut!(
    /// scipy.ndimage.binary_erosion (non-zero = true; the result 0/1).
    BinaryErosionArgs, "binary-erosion",
    "Example: cliper binary-erosion mask.nii.gz out/eroded.nii.gz --iterations 2 --connectivity 2",
    structure: BinaryStructureArgs => BinaryMorphologyArgs, |structure| BinaryMorphologyArgs { operation: MorphologyOp::Erosion, structure }
);
fixed_shortcut!(
    /// scipy.ndimage.binary_dilation.
    BinaryDilationArgs, "binary-dilation",
    "Example: cliper binary-dilation mask.nii.gz out/dilated.nii.gz --structure ball.npy",
    structure: BinaryStructureArgs => BinaryMorphologyArgs, |structure| BinaryMorphologyArgs { operation: MorphologyOp::Dilation, structure }
);
fixed_shortcut!(
    /// scipy.ndimage.binary_opening (erosion, then dilation).
    BinaryOpeningArgs, "binary-opening",
    "Example: cliper binary-opening mask.png out/opened.png --iterations 2",
    structure: BinaryStructureArgs => BinaryMorphologyArgs, |structure| BinaryMorphologyArgs { operation: MorphologyOp::Opening, structure }
);
fixed_shortcut!(
    /// scipy.ndimage.binary_closing (dilation, then erosion).
    BinaryClosingArgs, "binary-closing",
    "Example: cliper binary-closing mask.png out/closed.png",
    structure: BinaryStructureArgs => BinaryMorphologyArgs, |structure| BinaryMorphologyArgs { operation: MorphologyOp::Closing, structure }
);

/// The structure of labelling: connectivity or a structure file, and the axes spanned.
///
/// ```
/// use cliper::chain::{LabelArgs, Op};
/// let Op::Label(LabelArgs { connect }) = toml::from_str("op = 'label'\nconnectivity = 2")? else { unreachable!() };
/// assert_eq!(connect.connectivity, 2);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
pub struct ConnectArgs {
    /// generate_binary_structure's connectivity: 1 (faces, the default) to the rank (every neighbour).
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one_count")]
    pub connectivity: usize,
    /// A structure file (non-zero = connected; 3 per axis, centro-symmetric), instead of --connectivity.
    #[arg(long)]
    #[serde(default)]
    pub structure: Option<String>,
    /// Axes spanned, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
}

impl ConnectArgs {
    /// Labels (or filled holes, `holes`) of `x`.
    fn plan(&self, op: &str, x: &AnyData, holes: bool) -> Result<Planned> {
        let nd = x.shape().len();
        let rank = match (self.rank, &self.structure) {
            (None, None) => Some(default_rank(op, x.shape(), false, false)?),
            (rank, _) => rank,
        };
        let mut params = LabelParams::default().connectivity(self.connectivity);
        if let Some(file) = &self.structure {
            params = params.structure(footprint_file(file)?);
        }
        if let Some(r) = rank {
            params = params.rank(r);
        }
        let per_item: usize = x.shape().iter().rev().take(rank.unwrap_or(nd).min(nd)).product();
        if !holes && per_item > 1 << 24 && matches!(x, AnyData::F32(_)) {
            return Err(Error::invalid(
                op,
                format!(
                    "labels of items of {per_item} elements (shape {:?}) can exceed float32's exact integers (2^24): \
                     run in double precision (--precision double; precision = \"double\" in a pipeline)",
                    x.shape()
                ),
            ));
        }
        let needs = "real data (non-zero is foreground)";
        real_only(op, x, needs, |x| label(x, params.clone(), holes), |x| label(x, params.clone(), holes))
    }

    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        self.structure.is_none().then_some(&mut self.rank)
    }

    fn files(&self) -> Vec<(&'static str, &str)> {
        self.structure.iter().map(|f| ("structure", f.as_str())).collect()
    }
}

/// Labels (or filled holes) of real data into a new output.
fn label<T: Kind + RealElement>(x: &XData<T>, params: LabelParams, holes: bool) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &Label::<T>::output_shape(x.shape(), &params)?)?;
    let p: Box<dyn Process> =
        if holes { Box::new(FillHoles::new(x, &y, params)) } else { Box::new(Label::new(x, &y, params)) };
    Ok((p, T::wrap(y)))
}

/// scipy.ndimage.label: connected components of the non-zero elements, numbered 1, 2, … (0: background).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'label'")?;
/// assert_eq!(step.name(), "label");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper label mask.png out/labels.tif\n  cliper label mask.nii.gz out/labels.nii.gz --rank 3 --connectivity 3\n\nLabels are numbered in raster order of each component's first element, as scipy's; the number of features is the largest label."
)]
pub struct LabelArgs {
    /// What is connected.
    #[command(flatten)]
    #[serde(flatten)]
    pub connect: ConnectArgs,
}

impl Named for LabelArgs {
    const NAME: &'static str = "label";
}

impl Operation for LabelArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        self.connect.plan(Self::NAME, x, false)
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "labels connected regions across the whole image"))
    }
    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        self.connect.unset_rank()
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        refuse_colour_rank(Self::NAME, self.connect.rank, shape)?;
        Ok(self.clone())
    }
    fn result_dtype(&self) -> Option<Dtype> {
        Some(Dtype::I32)
    }
    fn files(&self) -> Vec<(&'static str, &str)> {
        self.connect.files()
    }
}

/// scipy.ndimage.binary_fill_holes: fills the zero regions that do not reach the array's edge (the result 0/1).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'fill-holes'")?;
/// assert_eq!(step.name(), "fill-holes");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper fill-holes mask.nii.gz out/filled.nii.gz --rank 3")]
pub struct FillHolesArgs {
    /// What is connected.
    #[command(flatten)]
    #[serde(flatten)]
    pub connect: ConnectArgs,
}

impl Named for FillHolesArgs {
    const NAME: &'static str = "fill-holes";
}

impl Operation for FillHolesArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        self.connect.plan(Self::NAME, x, true)
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "fills regions that only the whole image shows are enclosed"))
    }
    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        self.connect.unset_rank()
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        refuse_colour_rank(Self::NAME, self.connect.rank, shape)?;
        Ok(self.clone())
    }
    fn result_dtype(&self) -> Option<Dtype> {
        Some(Dtype::U8)
    }
    fn files(&self) -> Vec<(&'static str, &str)> {
        self.connect.files()
    }
}

/// scipy.ndimage.distance_transform_edt: each non-zero element's distance to the nearest zero element, or with
/// `--indices` that element's index (scipy's `return_indices`: int32, a leading axis of one coordinate per axis).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'distance-transform'")?;
/// assert_eq!(step.name(), "distance-transform");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper distance mask.nii.gz out/distance_mm.nii.gz --rank 3      # in mm: the voxel size is the default sampling\n  cliper distance mask.png out/distance.tif --sampling 1\n  cliper distance mask.png out/nearest.npy --indices               # [2, rows, columns]: the nearest zero's row and column"
)]
#[serde(deny_unknown_fields)]
pub struct DistanceTransformArgs {
    /// The spacing per axis: S or S,S,… — or voxel, the input's voxel size in mm (the default for DICOM,
    /// NIfTI, NRRD and MetaImage inputs; 1 for others).
    #[arg(long)]
    #[serde(default)]
    pub sampling: Option<String>,
    /// Axes spanned, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
    /// Write the index of each element's nearest zero element instead of the distance (scipy's return_indices):
    /// int32, a leading axis of one coordinate per input axis (ties: the lower position, axis by axis, as scipy).
    #[arg(long)]
    #[serde(default)]
    pub indices: bool,
}

impl Named for DistanceTransformArgs {
    const NAME: &'static str = "distance-transform";
    const ALIASES: &'static [&'static str] = &["distance", "distance-transform-edt"];
}

impl Operation for DistanceTransformArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let rank = spanned(Self::NAME, self.rank, x.shape())?;
        let sampling: Vec<f64> = match self.sampling.as_deref().map(str::trim) {
            None => vec![1.0],
            Some("voxel") => {
                return Err(Error::invalid(
                    Self::NAME,
                    "sampling `voxel` needs the input's voxel spacing, which only DICOM, NIfTI, NRRD and MetaImage \
                     inputs carry; give the spacing as numbers (1,1,2.5)",
                ));
            }
            Some(text) => text
                .split(',')
                .map(|t| {
                    t.trim()
                        .parse::<f64>()
                        .map_err(|_| Error::invalid(Self::NAME, format!("`{t}` in `{text}` is not a spacing")))
                })
                .collect::<Result<_>>()?,
        };
        let params = DistanceParams::default().sampling(&sampling).rank(rank).indices(self.indices);
        let needs = "real data (non-zero is foreground)";
        real_only(Self::NAME, x, needs, |x| distance(x, params.clone()), |x| distance(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "measures distances across the whole image"))
    }
    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        Some(&mut self.rank)
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        refuse_colour_rank(Self::NAME, self.rank, shape)?;
        if self.indices {
            return Err(colour_refusal(Self::NAME, shape, "--indices"));
        }
        Ok(self.clone())
    }
    fn geometry(&self, geometry: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        // Indices have a leading axis of coordinates: no longer the input's voxel grid.
        (!self.indices).then_some(*geometry)
    }
    fn result_dtype(&self) -> Option<Dtype> {
        self.indices.then_some(Dtype::I32)
    }
    fn in_voxels(&self, geometry: Option<&Geometry>, shape: &[usize], colour: bool) -> Result<Self> {
        // The voxel size is the spacing scipy's `sampling` means: the default for inputs that carry it.
        let voxel = matches!(self.sampling.as_deref().map(str::trim), None | Some("voxel"));
        let (true, Some(g)) = (voxel, geometry) else { return Ok(self.clone()) };
        let rank = spanned(Self::NAME, self.rank, shape)?;
        let spacing = g.spacing_mm();
        let values: Vec<String> = spatial_span(Self::NAME, "transform", rank, shape, colour)?
            .iter()
            .map(|&(_, k)| format!("{}", spacing.get(k).copied().unwrap_or(1.0)))
            .collect();
        Ok(DistanceTransformArgs { sampling: Some(values.join(",")), rank: Some(rank), indices: self.indices })
    }
}

/// The distance transform of real data into a new output.
fn distance<T: Kind + RealElement>(x: &XData<T>, params: DistanceParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &DistanceTransform::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(DistanceTransform::new(x, &y, params)), T::wrap(y)))
}

/// scipy.ndimage.distance_transform_cdt: each non-zero element's chamfer distance to the nearest zero element —
/// the fewest steps of the metric's structure (chessboard: every neighbour, the L∞ distance; taxicab: the faces,
/// the L1 distance; or a structure file) — as int32, -1 where no zero can be reached; or with `--indices` that
/// zero element's index. scipy's two sequential raster passes, run on the host.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'distance-transform-cdt'\nmetric = 'taxicab'")?;
/// assert_eq!(step.name(), "distance-transform-cdt");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper distance-transform-cdt mask.png out/steps.tif --metric taxicab\n  cliper cdt mask.nii.gz out/nearest.npy --indices"
)]
#[serde(deny_unknown_fields)]
pub struct DistanceTransformCdtArgs {
    /// chessboard (every neighbour: L∞, scipy's default) or taxicab (faces: L1; also cityblock, manhattan).
    #[arg(long, default_value = "chessboard")]
    #[serde(default = "chessboard")]
    pub metric: String,
    /// A structure file instead of --metric (scipy's metric array: 3 along every axis, non-zero = one step; its
    /// axes set --rank).
    #[arg(long)]
    #[serde(default)]
    pub structure: Option<String>,
    /// Axes spanned, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
    /// Write the index of each element's nearest zero element instead of the distance (scipy's return_indices):
    /// int32, a leading axis of one coordinate per input axis.
    #[arg(long)]
    #[serde(default)]
    pub indices: bool,
}

fn chessboard() -> String {
    "chessboard".into()
}

impl Named for DistanceTransformCdtArgs {
    const NAME: &'static str = "distance-transform-cdt";
    const ALIASES: &'static [&'static str] = &["cdt"];
}

impl DistanceTransformCdtArgs {
    /// The structure: the file's, or the metric's over `rank` axes.
    fn params(&self, shape: &[usize]) -> Result<ChamferParams> {
        let params = if let Some(file) = &self.structure {
            ChamferParams::structure(footprint_file(file)?)
        } else {
            let rank = spanned(Self::NAME, self.rank, shape)?;
            match self.metric.trim() {
                "chessboard" => ChamferParams::chessboard(rank)?,
                "taxicab" | "cityblock" | "manhattan" => ChamferParams::taxicab(rank)?,
                other => {
                    return Err(Error::invalid(
                        Self::NAME,
                        format!("metric `{other}` is not chessboard, taxicab, cityblock or manhattan"),
                    ));
                }
            }
        };
        Ok(params.indices(self.indices))
    }
}

impl Operation for DistanceTransformCdtArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = self.params(x.shape())?;
        let needs = "real data (non-zero is foreground)";
        real_only(Self::NAME, x, needs, |x| chamfer(x, params.clone()), |x| chamfer(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "measures distances across the whole image"))
    }
    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        self.structure.is_none().then_some(&mut self.rank)
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        refuse_colour_rank(Self::NAME, self.rank, shape)?;
        if self.indices {
            return Err(colour_refusal(Self::NAME, shape, "--indices"));
        }
        Ok(self.clone())
    }
    fn geometry(&self, geometry: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        (!self.indices).then_some(*geometry)
    }
    fn result_dtype(&self) -> Option<Dtype> {
        Some(Dtype::I32)
    }
    fn files(&self) -> Vec<(&'static str, &str)> {
        self.structure.iter().map(|f| ("structure", f.as_str())).collect()
    }
}

/// The chamfer distance transform of real data into a new output.
fn chamfer<T: Kind + RealElement>(x: &XData<T>, params: ChamferParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &ChamferDistance::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(ChamferDistance::new(x, &y, params)), T::wrap(y)))
}

/// scipy.ndimage.distance_transform_bf: each non-zero element's distance to the nearest zero element by brute
/// force — Euclidean (with --sampling), taxicab or chessboard (uint32) — or with `--indices` that element's index
/// (ties: the highest position, as scipy). Compares every pair of elements: for small images.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'distance-transform-bf'\nmetric = 'chessboard'")?;
/// assert_eq!(step.name(), "distance-transform-bf");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper distance-transform-bf mask.png out/steps.tif --metric taxicab")]
#[serde(deny_unknown_fields)]
pub struct DistanceTransformBfArgs {
    /// euclidean (scipy's default), taxicab (also cityblock, manhattan) or chessboard.
    #[arg(long, default_value = "euclidean")]
    #[serde(default = "euclidean")]
    pub metric: String,
    /// The spacing per axis for the Euclidean metric: S or S,S,… (default 1; scipy ignores it for the others).
    #[arg(long)]
    #[serde(default)]
    pub sampling: Option<String>,
    /// Write the index of each element's nearest zero element instead of the distance (scipy's return_indices):
    /// int32, a leading axis of one coordinate per input axis.
    #[arg(long)]
    #[serde(default)]
    pub indices: bool,
}

fn euclidean() -> String {
    "euclidean".into()
}

impl Named for DistanceTransformBfArgs {
    const NAME: &'static str = "distance-transform-bf";
    const ALIASES: &'static [&'static str] = &[];
}

impl Operation for DistanceTransformBfArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let metric = BruteForceMetric::parse(&self.metric)?;
        let sampling: Vec<f64> = match self.sampling.as_deref().map(str::trim) {
            None => vec![1.0],
            Some(text) => text
                .split(',')
                .map(|t| {
                    t.trim()
                        .parse::<f64>()
                        .map_err(|_| Error::invalid(Self::NAME, format!("`{t}` in `{text}` is not a spacing")))
                })
                .collect::<Result<_>>()?,
        };
        let params = BruteForceParams::new(metric).sampling(&sampling).indices(self.indices);
        let needs = "real data (non-zero is foreground)";
        real_only(Self::NAME, x, needs, |x| brute_force(x, params.clone()), |x| brute_force(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "measures distances across the whole image"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        Err(colour_refusal(Self::NAME, shape, "a brute-force distance spanning every axis"))
    }
    fn geometry(&self, geometry: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        (!self.indices).then_some(*geometry)
    }
    fn result_dtype(&self) -> Option<Dtype> {
        if self.indices {
            return Some(Dtype::I32);
        }
        match BruteForceMetric::parse(&self.metric) {
            Ok(BruteForceMetric::Euclidean) | Err(_) => None,
            Ok(_) => Some(Dtype::U32),
        }
    }
}

/// The brute-force distance transform of real data into a new output.
fn brute_force<T: Kind + RealElement>(x: &XData<T>, params: BruteForceParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &BruteForceDistance::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(BruteForceDistance::new(x, &y, params)), T::wrap(y)))
}

/// skimage.morphology.remove_small_objects (0.26): connected components of the non-zero elements (or, with
/// `--labelled`, the elements of each label value) of at most `max_size` elements are set to 0.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'remove-small-objects'\nmax_size = 10")?;
/// assert_eq!(step.name(), "remove-small-objects");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper remove-small-objects mask.png out/clean.png --max-size 64")]
#[serde(deny_unknown_fields)]
pub struct RemoveSmallObjectsArgs {
    /// Objects of this many elements or fewer are removed (skimage 0.26's max_size).
    #[arg(long, default_value_t = 64)]
    #[serde(default = "default_max_size")]
    pub max_size: u64,
    /// generate_binary_structure's connectivity: 1 (faces, the default) to the number of axes.
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one_count")]
    pub connectivity: usize,
    /// The input holds labels (non-negative whole numbers): each value is one object (skimage's rule for integer
    /// arrays); without it, non-zero elements are labelled by connectivity (its rule for bool arrays).
    #[arg(long)]
    #[serde(default)]
    pub labelled: bool,
}

/// skimage.morphology.remove_small_holes (0.26): connected components of the zero elements of at most `max_size`
/// elements (those touching the edge included) are filled; the result is 0/1.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'remove-small-holes'")?;
/// assert_eq!(step.name(), "remove-small-holes");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper remove-small-holes mask.png out/filled.png --max-size 16")]
#[serde(deny_unknown_fields)]
pub struct RemoveSmallHolesArgs {
    /// Holes of this many elements or fewer are filled (skimage 0.26's max_size).
    #[arg(long, default_value_t = 64)]
    #[serde(default = "default_max_size")]
    pub max_size: u64,
    /// generate_binary_structure's connectivity: 1 (faces, the default) to the number of axes.
    #[arg(long, default_value_t = 1)]
    #[serde(default = "one_count")]
    pub connectivity: usize,
}

/// skimage's default max_size.
fn default_max_size() -> u64 {
    64
}

impl Named for RemoveSmallObjectsArgs {
    const NAME: &'static str = "remove-small-objects";
}

impl Operation for RemoveSmallObjectsArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = RemoveSmallParams::new(SmallTarget::Objects, SizeLimit::AtMost(self.max_size))
            .connectivity(self.connectivity)
            .labelled(self.labelled);
        let needs = "real data (non-zero is foreground, or labels)";
        real_only(Self::NAME, x, needs, |x| remove_small(x, params.clone()), |x| remove_small(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "measures objects across the whole image"))
    }
}

impl Named for RemoveSmallHolesArgs {
    const NAME: &'static str = "remove-small-holes";
}

impl Operation for RemoveSmallHolesArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = RemoveSmallParams::new(SmallTarget::Holes, SizeLimit::AtMost(self.max_size))
            .connectivity(self.connectivity);
        let needs = "real data (non-zero is foreground)";
        real_only(Self::NAME, x, needs, |x| remove_small(x, params.clone()), |x| remove_small(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "measures holes across the whole image"))
    }
    fn result_dtype(&self) -> Option<Dtype> {
        Some(Dtype::U8)
    }
}

/// Small objects or holes removed from real data into a new output.
fn remove_small<T: Kind + RealElement>(x: &XData<T>, params: RemoveSmallParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &RemoveSmall::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(RemoveSmall::new(x, &y, params)), T::wrap(y)))
}

/// skimage.morphology.skeletonize (0.26): every connected component of the non-zero elements thinned to a line one
/// element wide (the result 0/1). 2-D images take Zhang's thinning by default, 3-D ones Lee's.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'skeletonize'\nmethod = 'lee'")?;
/// assert_eq!(step.name(), "skeletonize");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper skeletonize mask.png out/skeleton.png\n  cliper skeletonize mask.nii.gz out/skeleton.nii.gz      # 3-D: Lee's thinning"
)]
#[serde(deny_unknown_fields)]
pub struct SkeletonizeArgs {
    /// zhang (2-D only; the 2-D default) or lee (2-D or 3-D; the 3-D default, computed on the host).
    #[arg(long)]
    #[serde(default, deserialize_with = "maybe_by_name")]
    pub method: Option<SkeletonMethod>,
}

impl Named for SkeletonizeArgs {
    const NAME: &'static str = "skeletonize";
}

impl Operation for SkeletonizeArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = SkeletonParams { method: self.method };
        let needs = "real data (non-zero is foreground)";
        real_only(Self::NAME, x, needs, |x| skeletonize(x, params.clone()), |x| skeletonize(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "thins each object as a whole, until nothing changes"))
    }
    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        Err(colour_refusal(Self::NAME, shape, "a skeleton (of a mask: one channel)"))
    }
    fn result_dtype(&self) -> Option<Dtype> {
        Some(Dtype::U8)
    }
}

/// The skeleton of real data into a new 0/1 output.
fn skeletonize<T: Kind + RealElement>(x: &XData<T>, params: SkeletonParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &Skeletonize::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(Skeletonize::new(x, &y, params)), T::wrap(y)))
}
