//! The operations pipeline files (and the `cliper` subcommands) offer, each turned into a library process bound
//! to its input and output arrays.

use super::any_data::{AnyData, FileSpec, Kind, dispatch};
use crate::Result;
use crate::prelude::*;
use num_complex::Complex64;
use serde::Deserialize;
use std::str::FromStr;

/// One operation and its parameters, as a pipeline step spells it (`op = "convolve"`, …) and as the
/// subcommands build it from their flags.
///
/// ```
/// use cliper::chain::Op;
/// let op: Op = toml::from_str("op = \"convolve\"\nkernel = \"gaussian:2\"")?;
/// assert_eq!((op.name(), op.arity()), ("convolve", 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "op", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Op {
    /// numpy-style element-wise maths: `expr` over the step's inputs, named `a`, `b`, `c`, … in order (`x` also
    /// names the first): `"sqrt(a*a + b*b)"`, `"where(x > 0, log(x), 0)"` ([`Expr::parse`] lists the functions).
    /// Back-to-back element-wise steps run as one kernel.
    Expression {
        /// The expression.
        expr: String,
    },
    /// A display window (CT/MR window level and width): `level ± width/2` mapped linearly onto `[low, high]`,
    /// values outside clipped.
    Window {
        /// The window's centre.
        level: f64,
        /// The window's width.
        width: f64,
        /// The value the window's bottom maps to (default 0).
        #[serde(default)]
        low: f64,
        /// The value the window's top maps to (default 1).
        #[serde(default = "one")]
        high: f64,
    },
    /// `above` where a value exceeds `value`, else `below`.
    Threshold {
        /// The threshold.
        value: f64,
        /// The result above it (default 1).
        #[serde(default = "one")]
        above: f64,
        /// The result at or below it (default 0).
        #[serde(default)]
        below: f64,
    },
    /// numpy.clip: values below `min` become `min`, values above `max` become `max`.
    Clip {
        /// The lower bound.
        min: f64,
        /// The upper bound.
        max: f64,
    },
    /// A rank filter: scipy.ndimage's median_filter (`filter = "median"`), minimum_filter (`minimum`),
    /// maximum_filter (`maximum`), percentile_filter (`percentile:P`) or rank_filter (`rank:R`).
    RankFilter {
        /// `median`, `minimum`, `maximum`, `percentile:P` or `rank:R`.
        filter: String,
        /// The window's size: one for every axis or one per axis (`5`, `[3, 5]`, `"3,5"`; default 3).
        #[serde(default = "three")]
        size: Sizes,
        /// A footprint file (non-zero = in the window; overrides `size`).
        #[serde(default)]
        footprint: Option<String>,
        /// scipy.ndimage's border mode (default `reflect`).
        #[serde(default = "reflect")]
        border: String,
        /// The constant of border `constant` (scipy's `cval`).
        #[serde(default)]
        value: f64,
        /// The window's shift (scipy's `origin`): one for every axis or one per axis.
        #[serde(default)]
        origin: Option<Vec<isize>>,
        /// Axes the window spans, the last ones (default every axis: `default_rank`).
        #[serde(default)]
        rank: Option<usize>,
    },
    /// Grey morphology with a flat structuring element: scipy.ndimage's grey_erosion (`operation = "erosion"`),
    /// grey_dilation, grey_opening, grey_closing.
    GreyMorphology {
        /// `erosion`, `dilation`, `opening`, `closing`, `gradient`, `laplace`, `white-tophat` or `black-tophat`
        /// (scipy's names work too: `morphological_gradient`, `white_tophat`, …).
        operation: String,
        /// A non-flat structuring element: a file of values (scipy's `structure`; the footprint is its box
        /// unless `footprint` is given).
        #[serde(default)]
        structure: Option<String>,
        /// The window's size: one for every axis or one per axis (`5`, `[3, 5]`, `"3,5"`; default 3).
        #[serde(default = "three")]
        size: Sizes,
        /// A footprint file (non-zero = in the window; overrides `size`).
        #[serde(default)]
        footprint: Option<String>,
        /// scipy.ndimage's border mode (default `reflect`).
        #[serde(default = "reflect")]
        border: String,
        /// The constant of border `constant` (scipy's `cval`).
        #[serde(default)]
        value: f64,
        /// The window's shift (scipy's `origin`): one for every axis or one per axis.
        #[serde(default)]
        origin: Option<Vec<isize>>,
        /// Axes the window spans, the last ones (default every axis: `default_rank`).
        #[serde(default)]
        rank: Option<usize>,
    },
    /// Binary morphology (non-zero = true; the result 0/1): scipy.ndimage's binary_erosion
    /// (`operation = "erosion"`), binary_dilation, binary_opening, binary_closing.
    BinaryMorphology {
        /// `erosion`, `dilation`, `opening` or `closing`.
        operation: String,
        /// Repetitions of each step (default 1; 0 repeats until nothing changes).
        #[serde(default = "one_step_count")]
        iterations: usize,
        /// A structure file (non-zero = in the structure; overrides `connectivity`).
        #[serde(default)]
        structure: Option<String>,
        /// scipy's generate_binary_structure(rank, connectivity) (default 1, the cross).
        #[serde(default = "one_step_count")]
        connectivity: usize,
        /// The value outside the array (0 or 1, default 0).
        #[serde(default)]
        border_value: u8,
        /// The structure's shift (scipy's `origin`).
        #[serde(default)]
        origin: Option<Vec<isize>>,
        /// Axes spanned, the last ones (default every axis: `default_rank`).
        #[serde(default)]
        rank: Option<usize>,
    },
    /// scipy.ndimage.label: connected components of the non-zero elements, numbered 1, 2, … in raster order of
    /// each component's first element (0: background).
    Label {
        /// generate_binary_structure(rank, connectivity) (default 1: faces only).
        #[serde(default = "one_step_count")]
        connectivity: usize,
        /// A structure file (3 per axis, centro-symmetric; overrides `connectivity`).
        #[serde(default)]
        structure: Option<String>,
        /// Axes spanned, the last ones (default every axis: `default_rank`).
        #[serde(default)]
        rank: Option<usize>,
    },
    /// scipy.ndimage.binary_fill_holes: the non-zero elements and the zero ones that cannot reach the array's
    /// edge through zero elements (the result 0/1).
    FillHoles {
        /// generate_binary_structure(rank, connectivity) (default 1).
        #[serde(default = "one_step_count")]
        connectivity: usize,
        /// A structure file (3 per axis, centro-symmetric; overrides `connectivity`).
        #[serde(default)]
        structure: Option<String>,
        /// Axes spanned, the last ones (default every axis: `default_rank`).
        #[serde(default)]
        rank: Option<usize>,
    },
    /// scipy.ndimage.distance_transform_edt: each non-zero element's distance to the nearest zero element.
    DistanceTransform {
        /// The spacing per axis: numbers (`"1,1,2.5"`, one or one per axis), or `voxel` — the input's voxel size
        /// in mm (DICOM, NIfTI, NRRD, MetaImage), which is also the default for such inputs (1 for others).
        #[serde(default)]
        sampling: Option<String>,
        /// Axes spanned, the last ones (default every axis: `default_rank`).
        #[serde(default)]
        rank: Option<usize>,
    },
    /// The gradient magnitude: scipy.ndimage.gaussian_gradient_magnitude (`derivative = "gaussian:SIGMA"`) or
    /// generic_gradient_magnitude with `sobel` (the default), `prewitt` or `scharr`.
    GradientMagnitude {
        /// `sobel`, `prewitt`, `scharr` or `gaussian:SIGMA` (one sigma, or one per axis, in voxels).
        #[serde(default = "sobel")]
        derivative: String,
        /// scipy.ndimage's border mode (default `reflect`).
        #[serde(default = "reflect")]
        border: String,
        /// The constant of border `constant`.
        #[serde(default)]
        value: f64,
        /// Axes the gradient spans, the last ones (default every axis: `default_rank`).
        #[serde(default)]
        rank: Option<usize>,
    },
    /// scipy.ndimage.zoom: spline interpolation onto a grid `zoom` times as fine per axis — or onto voxels of
    /// `spacing` millimetres (`spacing = "1"`: isotropic 1 mm voxels; needs an input with a voxel size). The
    /// output's voxel size follows.
    Zoom {
        /// One factor, or one per axis (`"2"`, `"1,2,2"`); a colour image's channels are left alone.
        #[serde(default)]
        zoom: Option<String>,
        /// The voxel size wanted, in mm: one, or one per spatial axis (slice, row, column).
        #[serde(default)]
        spacing: Option<String>,
        /// scipy's grid_mode: the outer edges of the first and last voxels coincide (default: their centres).
        #[serde(default)]
        grid_mode: bool,
        /// The spline order, 0 to 5 (default 3, cubic).
        #[serde(default = "three_order")]
        order: usize,
        /// scipy's interpolation mode (default `constant`).
        #[serde(default = "constant")]
        mode: String,
        /// The value outside for modes `constant` and `grid-constant` (scipy's cval).
        #[serde(default)]
        cval: f64,
        /// Compute the B-spline coefficients first (default true; false when the input holds them already).
        #[serde(default = "yes")]
        prefilter: bool,
    },
    /// scipy.ndimage.shift: output `o` reads the input at `o − shift` (one, or one per axis), interpolated.
    Shift {
        /// One shift, or one per axis, in samples.
        shift: String,
        /// The spline order, 0 to 5 (default 3, cubic).
        #[serde(default = "three_order")]
        order: usize,
        /// scipy's interpolation mode (default `constant`).
        #[serde(default = "constant")]
        mode: String,
        /// The value outside for modes `constant` and `grid-constant` (scipy's cval).
        #[serde(default)]
        cval: f64,
        /// Compute the B-spline coefficients first (default true; false when the input holds them already).
        #[serde(default = "yes")]
        prefilter: bool,
    },
    /// scipy.ndimage.rotate: by `angle` degrees (counter-clockwise) in the plane of `axes` about the centre.
    Rotate {
        /// Degrees.
        angle: f64,
        /// The plane's two axes (default scipy's `[1, 0]`; a colour image's two image axes).
        #[serde(default)]
        axes: Option<Vec<usize>>,
        /// Enlarge the output to hold the whole rotated input (default true).
        #[serde(default = "yes")]
        reshape: bool,
        /// The spline order, 0 to 5 (default 3, cubic).
        #[serde(default = "three_order")]
        order: usize,
        /// scipy's interpolation mode (default `constant`).
        #[serde(default = "constant")]
        mode: String,
        /// The value outside for modes `constant` and `grid-constant` (scipy's cval).
        #[serde(default)]
        cval: f64,
        /// Compute the B-spline coefficients first (default true; false when the input holds them already).
        #[serde(default = "yes")]
        prefilter: bool,
    },
    /// scipy.ndimage.affine_transform: output `o` reads the input at `matrix · o + offset`.
    AffineTransform {
        /// Rows separated by `;`, values by `,`: `"0.9,-0.3;0.4,1.2"` (ndim × ndim), with a last column for the
        /// offset (ndim × (ndim + 1)), homogeneous ((ndim + 1)²), or one row: the diagonal. A colour image's
        /// matrix is for its two image axes.
        matrix: String,
        /// One offset, or one per axis (default 0).
        #[serde(default)]
        offset: Option<String>,
        /// The output shape (default the input's).
        #[serde(default)]
        output_shape: Option<Vec<usize>>,
        /// The spline order, 0 to 5 (default 3, cubic).
        #[serde(default = "three_order")]
        order: usize,
        /// scipy's interpolation mode (default `constant`).
        #[serde(default = "constant")]
        mode: String,
        /// The value outside for modes `constant` and `grid-constant` (scipy's cval).
        #[serde(default)]
        cval: f64,
        /// Compute the B-spline coefficients first (default true; false when the input holds them already).
        #[serde(default = "yes")]
        prefilter: bool,
    },
    /// scipy.ndimage.map_coordinates: the first input interpolated at the coordinates the second holds (shape
    /// `[ndim, *output_shape]`, real).
    MapCoordinates {
        /// The spline order, 0 to 5 (default 3, cubic).
        #[serde(default = "three_order")]
        order: usize,
        /// scipy's interpolation mode (default `constant`).
        #[serde(default = "constant")]
        mode: String,
        /// The value outside for modes `constant` and `grid-constant` (scipy's cval).
        #[serde(default)]
        cval: f64,
        /// Compute the B-spline coefficients first (default true; false when the input holds them already).
        #[serde(default = "yes")]
        prefilter: bool,
    },
    /// scipy.ndimage.spline_filter (or spline_filter1d along `axis`): the B-spline coefficients, for
    /// interpolation with `prefilter = false` later.
    SplineFilter {
        /// The spline order, 2 to 5 (0 and 1 copy; default 3).
        #[serde(default = "three_order")]
        order: usize,
        /// scipy's mode (default `mirror`).
        #[serde(default = "mirror")]
        mode: String,
        /// One axis only (negative counts from the end).
        #[serde(default)]
        axis: Option<isize>,
        /// Only the last `rank` axes (default every axis, up to three; a colour image's two image axes).
        #[serde(default)]
        rank: Option<usize>,
    },
    /// Transpose the last two axes (conjugating with `conj`).
    Transpose {
        /// Conjugate as well (the Hermitian transpose).
        #[serde(default)]
        conj: bool,
    },
    /// Reorder the axes.
    Permute {
        /// Axis `k` of the result is axis `axes[k]` of the input.
        axes: Vec<usize>,
    },
    /// `op(a)·op(b)` over the last two axes, batched over the rest.
    Matmul {
        /// Transpose `a`.
        #[serde(default)]
        ta: bool,
        /// Transpose `b`.
        #[serde(default)]
        tb: bool,
        /// Conjugate-transpose `a` (`Aᴴ`; the transpose for real data).
        #[serde(default)]
        ha: bool,
        /// Conjugate-transpose `b`.
        #[serde(default)]
        hb: bool,
        /// How exactly `f32` products are formed: `full` (default), `fp32-split` or `tf32` (TF32 tensor cores
        /// where the device has them; see [`crate::GemmPrecision`]). Not the pipeline's `precision`, which picks
        /// single or double data.
        #[serde(default)]
        gemm_precision: GemmPrecision,
    },
    /// The `n`-th power of square matrices.
    Power {
        /// The exponent.
        n: u64,
        /// The precision of its `f32` products, as for `matmul`.
        #[serde(default)]
        gemm_precision: GemmPrecision,
    },
    /// The p-norm of everything, or along one axis.
    Norm {
        /// The order (default 2).
        #[serde(default = "two")]
        p: NormP,
        /// Reduce along this axis only (negative counts from the last, as numpy's).
        #[serde(default)]
        axis: Option<isize>,
    },
    /// The dot product of two arrays (conjugating the first with `conj`), of everything or along one axis.
    Dot {
        /// Conjugate the first operand.
        #[serde(default)]
        conj: bool,
        /// Reduce along this axis only (negative counts from the last, as numpy's).
        #[serde(default)]
        axis: Option<isize>,
    },
    /// numpy.pad: widths and a numpy mode name.
    Pad {
        /// Widths per axis.
        width: Widths,
        /// numpy.pad's mode (default `constant`).
        #[serde(default = "constant")]
        mode: String,
        /// The constant of mode `constant`.
        #[serde(default)]
        value: f64,
    },
    /// scipy.ndimage-style convolution with a named filter or a filter file.
    Convolve {
        /// A named filter (`gaussian:2`, `sobel-x`, …) or a filter file.
        kernel: String,
        /// For filter files: `conv` (default, scipy.ndimage.convolve) or `corr` (correlate). Named filters are
        /// scipy.ndimage's functions of that name and take no mode.
        #[serde(default, deserialize_with = "maybe_by_name")]
        mode: Option<ConvMode>,
        /// scipy.ndimage's border mode (default `reflect`).
        #[serde(default = "reflect")]
        border: String,
        /// The constant of border `constant`.
        #[serde(default)]
        value: f64,
        /// `same` (default), `valid` or `full`.
        #[serde(default, deserialize_with = "by_name")]
        output: ConvOutput,
        /// Axes a named filter spans (default every axis: `default_rank`).
        #[serde(default)]
        rank: Option<usize>,
    },
}

/// An optional value given by its name, parsed by its `FromStr`.
fn maybe_by_name<'de, D: serde::Deserializer<'de>, V: FromStr<Err = Error>>(
    d: D,
) -> std::result::Result<Option<V>, D::Error> {
    by_name(d).map(Some)
}

/// A value given by its name (`conv`, `valid`, …), parsed by its `FromStr`.
fn by_name<'de, D: serde::Deserializer<'de>, V: FromStr<Err = Error>>(d: D) -> std::result::Result<V, D::Error> {
    String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
}

fn three() -> Sizes {
    Sizes(vec![3])
}
fn one_step_count() -> usize {
    1
}
fn sobel() -> String {
    "sobel".into()
}
fn one() -> f64 {
    1.0
}
fn two() -> NormP {
    NormP(2.0)
}
fn constant() -> String {
    "constant".into()
}
fn reflect() -> String {
    "reflect".into()
}
fn mirror() -> String {
    "mirror".into()
}
fn three_order() -> usize {
    3
}
fn yes() -> bool {
    true
}

/// A norm order: a number ≥ 1 or `inf`.
///
/// ```
/// assert_eq!("inf".parse::<cliper::chain::NormP>()?.0, f64::INFINITY);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormP(pub f64);

impl std::str::FromStr for NormP {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<NormP, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "inf" | "infinity" | "∞" => Ok(NormP(f64::INFINITY)),
            t => t.parse::<f64>().map(NormP).map_err(|_| format!("`{text}` is not a norm order (a number ≥ 1 or inf)")),
        }
    }
}

impl<'de> Deserialize<'de> for NormP {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<NormP, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Number(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Number(p) => Ok(NormP(p)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// Pad widths: one number for every side of every axis, or `before:after` per axis (`8`, `4:4,2:6`).
///
/// ```
/// assert_eq!("4:4,2:6".parse::<cliper::chain::Widths>()?.0, vec![(4, 4), (2, 6)]);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Widths(pub Vec<(usize, usize)>);

impl std::str::FromStr for Widths {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Widths, String> {
        let bad = || format!("`{text}` is not a pad width: give N (all sides) or BEFORE:AFTER per axis, as in 4:4,2:6");
        let mut widths = Vec::new();
        for part in text.split(',') {
            let pair = match part.split_once(':') {
                Some((b, a)) => (b.trim().parse().map_err(|_| bad())?, a.trim().parse().map_err(|_| bad())?),
                None => {
                    let n = part.trim().parse().map_err(|_| bad())?;
                    (n, n)
                }
            };
            widths.push(pair);
        }
        Ok(Widths(widths))
    }
}

impl<'de> Deserialize<'de> for Widths {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Widths, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            All(usize),
            PerAxis(Vec<[usize; 2]>),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::All(n) => Ok(Widths(vec![(n, n)])),
            Raw::PerAxis(v) => Ok(Widths(v.into_iter().map(|[b, a]| (b, a)).collect())),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

impl Op {
    /// The name used in messages and in the pipeline file.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Expression { .. } => "expression",
            Op::Window { .. } => "window",
            Op::Threshold { .. } => "threshold",
            Op::Clip { .. } => "clip",
            Op::GradientMagnitude { .. } => "gradient-magnitude",
            Op::RankFilter { .. } => "rank-filter",
            Op::GreyMorphology { .. } => "grey-morphology",
            Op::BinaryMorphology { .. } => "binary-morphology",
            Op::DistanceTransform { .. } => "distance-transform",
            Op::Label { .. } => "label",
            Op::FillHoles { .. } => "fill-holes",
            Op::Zoom { .. } => "zoom",
            Op::Shift { .. } => "shift",
            Op::Rotate { .. } => "rotate",
            Op::AffineTransform { .. } => "affine-transform",
            Op::MapCoordinates { .. } => "map-coordinates",
            Op::SplineFilter { .. } => "spline-filter",
            Op::Transpose { .. } => "transpose",
            Op::Permute { .. } => "permute",
            Op::Matmul { .. } => "matmul",
            Op::Power { .. } => "power",
            Op::Norm { .. } => "norm",
            Op::Dot { .. } => "dot",
            Op::Pad { .. } => "pad",
            Op::Convolve { .. } => "convolve",
        }
    }

    /// How many input arrays the operation takes.
    pub fn arity(&self) -> usize {
        match self {
            Op::Expression { .. } => self.expr().and_then(|e| e.ok()).map_or(1, |e| e.inputs().max(1)),
            Op::Matmul { .. } | Op::Dot { .. } | Op::MapCoordinates { .. } => 2,
            _ => 1,
        }
    }

    /// The operation as it applies to an input of `shape` (its first input's): the colour rule
    /// ([`Op::for_colour`]) when `colour`, the axes it spans when the step does not say ([`Op::with_default_rank`]),
    /// and millimetres in voxels of `geometry` ([`Op::in_voxels`]). What a chain plans, file by file and tile by
    /// tile.
    ///
    /// ```
    /// use cliper::Geometry;
    /// use cliper::chain::Op;
    /// let op: Op = toml::from_str("op = \"convolve\"\nkernel = \"gaussian:1.5mm\"")?;
    /// let scan = Geometry::from_spacing([3.0, 0.5, 0.75]);
    /// let Op::Convolve { kernel, rank, .. } = op.resolved(&[20, 64, 64], false, Some(&scan))? else { unreachable!() };
    /// assert_eq!((kernel.as_str(), rank), ("gaussian:0.5,3,2", Some(3))); // every axis, as scipy
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolved(&self, shape: &[usize], colour: bool, geometry: Option<&Geometry>) -> Result<Op> {
        let op = if colour { self.for_colour(shape)? } else { self.clone() };
        op.with_default_rank(shape, colour, geometry.is_some())?.in_voxels(geometry, shape, colour)
    }

    /// The operation with its `rank` — how many trailing axes it spans — filled in where the step leaves it out
    /// and no footprint, structure or filter file sets it: scipy.ndimage's default, every axis, as
    /// [`default_rank`] counts them for an input of `shape` (a colour image's two image axes; the three spatial
    /// axes of a volume with a `geometry` and more axes).
    ///
    /// ```
    /// use cliper::chain::Op;
    /// let label: Op = toml::from_str("op = \"label\"")?;
    /// let Op::Label { rank, .. } = label.with_default_rank(&[40, 64, 64], false, false)? else { unreachable!() };
    /// assert_eq!(rank, Some(3));
    /// let Op::Label { rank, .. } = label.with_default_rank(&[3, 64, 64], true, false)? else { unreachable!() };
    /// assert_eq!(rank, Some(2)); // per channel
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_default_rank(&self, shape: &[usize], colour: bool, geometry: bool) -> Result<Op> {
        let mut op = self.clone();
        let unset = match &mut op {
            Op::Convolve { kernel, rank, .. } if !FileSpec::parse(kernel).path.exists() => Some(rank),
            Op::GradientMagnitude { rank, .. } | Op::DistanceTransform { rank, .. } => Some(rank),
            Op::RankFilter { footprint: None, rank, .. } => Some(rank),
            Op::GreyMorphology { footprint: None, structure: None, rank, .. } => Some(rank),
            Op::BinaryMorphology { structure: None, rank, .. } => Some(rank),
            Op::Label { structure: None, rank, .. } | Op::FillHoles { structure: None, rank, .. } => Some(rank),
            _ => None,
        };
        if let Some(rank @ None) = unset {
            *rank = Some(default_rank(self.name(), shape, colour, geometry)?);
        }
        Ok(op)
    }

    /// The operation as it applies to a colour image of `shape` (channels on axis −3, cliper's convention): a
    /// pad of one width pads the two image axes only; a pad that would widen the channels, or a filter spanning
    /// more than the two image axes, is refused naming the shape.
    ///
    /// ```
    /// use cliper::chain::{Op, Widths};
    /// let pad = Op::Pad { width: Widths(vec![(4, 4)]), mode: "edge".into(), value: 0.0 };
    /// let Op::Pad { width, .. } = pad.for_colour(&[3, 64, 80])? else { unreachable!() };
    /// assert_eq!(width.0, vec![(0, 0), (4, 4), (4, 4)]);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn for_colour(&self, shape: &[usize]) -> Result<Op> {
        let nd = shape.len();
        let refuse = |what: &str| {
            Error::invalid(
                self.name(),
                format!(
                    "{what} of a colour image of shape {shape:?} (channels on axis {}); operations act per channel \
                     on the two image axes",
                    nd.saturating_sub(3)
                ),
            )
        };
        match self {
            Op::Pad { width, mode, value } if width.0.len() == 1 => {
                let spatial = width.0.first().copied().unwrap_or_default();
                let mut widths = vec![(0, 0); nd.saturating_sub(2)];
                widths.extend([spatial; 2]);
                Ok(Op::Pad { width: Widths(widths), mode: mode.clone(), value: *value })
            }
            Op::Pad { width, .. } if nd >= 3 && width.0.get(nd - 3).is_some_and(|&w| w != (0, 0)) => {
                Err(refuse("this pad would widen the colour channels"))
            }
            Op::Convolve { rank: Some(rank), .. }
            | Op::GradientMagnitude { rank: Some(rank), .. }
            | Op::RankFilter { rank: Some(rank), .. }
            | Op::GreyMorphology { rank: Some(rank), .. }
            | Op::BinaryMorphology { rank: Some(rank), .. }
            | Op::DistanceTransform { rank: Some(rank), .. }
            | Op::Label { rank: Some(rank), .. }
            | Op::FillHoles { rank: Some(rank), .. }
                if *rank > 2 =>
            {
                Err(refuse(&format!("a rank-{rank} filter would mix the colour channels")))
            }
            Op::Zoom { .. }
            | Op::Shift { .. }
            | Op::Rotate { .. }
            | Op::AffineTransform { .. }
            | Op::SplineFilter { .. }
            | Op::MapCoordinates { .. } => resample_for_colour(self, shape),
            other => Ok(other.clone()),
        }
    }

    /// The operation with sigmas given in millimetres (`gaussian:1.5mm`, `log:1mm,1mm,3mm`) turned into sigmas in
    /// voxels of each axis the filter spans — the millimetres divided by that axis's spacing in `geometry` — so
    /// that a filter on anisotropic voxels smooths equally far in every direction. Other operations are
    /// returned as they are; millimetres without a geometry are refused (plain arrays have no voxel size).
    ///
    /// ```
    /// use cliper::Geometry;
    /// use cliper::chain::Op;
    /// let op: Op = toml::from_str("op = \"convolve\"\nkernel = \"gaussian:1.5mm\"\nrank = 3")?;
    /// let scan = Geometry::from_spacing([3.0, 0.5, 0.75]);
    /// let Op::Convolve { kernel, .. } = op.in_voxels(Some(&scan), &[20, 64, 64], false)? else { unreachable!() };
    /// assert_eq!(kernel, "gaussian:0.5,3,2");
    /// assert!(op.in_voxels(None, &[20, 64, 64], false).unwrap_err().to_string().contains("spacing"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn in_voxels(&self, geometry: Option<&Geometry>, shape: &[usize], colour: bool) -> Result<Op> {
        if let Op::Zoom { spacing: Some(_), .. } = self {
            return resample_in_voxels(self, geometry, shape, colour);
        }
        if let Op::DistanceTransform { sampling, rank } = self {
            // The voxel size is the spacing scipy's `sampling` means: the default for inputs that carry it.
            let voxel = matches!(sampling.as_deref().map(str::trim), None | Some("voxel"));
            return match (voxel, geometry) {
                (true, Some(g)) => {
                    let rank = spanned(self.name(), *rank, shape)?;
                    let spatial = Geometry::spatial_axes(shape.len(), colour);
                    let first = 3 - spatial.len().min(3);
                    let spacing = g.spacing_mm();
                    let filtered: Vec<usize> =
                        spatial.iter().copied().skip(spatial.len().saturating_sub(rank)).collect();
                    if filtered.len() != rank {
                        return Err(Error::invalid(
                            self.name(),
                            format!(
                                "a transform over {rank} axes of an array of shape {shape:?} spans a non-spatial axis"
                            ),
                        ));
                    }
                    let values: Vec<String> = filtered
                        .iter()
                        .map(|axis| {
                            let k = first + spatial.iter().position(|s| s == axis).unwrap_or(0);
                            format!("{}", spacing.get(k).copied().unwrap_or(1.0))
                        })
                        .collect();
                    Ok(Op::DistanceTransform { sampling: Some(values.join(",")), rank: Some(rank) })
                }
                (true, None) if sampling.is_none() => Ok(self.clone()),
                _ => Ok(self.clone()),
            };
        }
        let Op::Convolve { kernel, rank, .. } = self else { return Ok(self.clone()) };
        let Some((name, args)) = kernel.split_once(':') else { return Ok(self.clone()) };
        if !args.to_ascii_lowercase().contains("mm") || FileSpec::parse(kernel).path.exists() {
            return Ok(self.clone());
        }
        let refuse = |why: String| Error::invalid(format!("filter {kernel}"), why);
        let Some(geometry) = geometry else {
            return Err(refuse(
                "sigmas in millimetres need the input's voxel spacing, which only DICOM and NIfTI inputs carry; give \
                 sigma in voxels (`gaussian:2`, or one per axis `gaussian:1,1,2`)"
                    .into(),
            ));
        };
        let rank = spanned(self.name(), *rank, shape)?;
        // `gaussian:1.5mm:0,1`: the orders after the sigmas stay as they are.
        let (args, orders) = match args.split_once(':') {
            Some((sigmas, orders)) => (sigmas, Some(orders)),
            None => (args, None),
        };
        let millimetres: Vec<f64> = args
            .split(',')
            .map(|t| {
                let t = t.trim().to_ascii_lowercase();
                t.strip_suffix("mm").unwrap_or(&t).trim().parse::<f64>().map_err(|_| {
                    refuse(format!("`{t}` is not a length: give every sigma in millimetres (`1.5mm`) or none"))
                })
            })
            .collect::<Result<_>>()?;
        let millimetres = match millimetres.as_slice() {
            [one] => vec![*one; rank],
            many if many.len() == rank => many.to_vec(),
            many => {
                return Err(refuse(format!(
                    "gives {} sigmas for a filter over {rank} axes: give one, or one per axis",
                    many.len()
                )));
            }
        };
        // The filter spans the last `rank` axes (a colour image's two image axes); each is a spatial axis whose
        // geometry axis (slice, row, column) gives its spacing.
        let spatial = Geometry::spatial_axes(shape.len(), colour);
        let first = 3 - spatial.len().min(3);
        let filtered: Vec<usize> = spatial.iter().copied().skip(spatial.len().saturating_sub(rank)).collect();
        if filtered.len() != rank {
            return Err(refuse(format!(
                "a filter over {rank} axes of an array of shape {shape:?} spans a non-spatial axis"
            )));
        }
        let spacing = geometry.spacing_mm();
        let sigmas: Vec<String> = filtered
            .iter()
            .zip(&millimetres)
            .map(|(axis, mm)| {
                let g = first + spatial.iter().position(|s| s == axis).unwrap_or(0);
                let voxels = mm / spacing.get(g).copied().unwrap_or(1.0);
                format!("{voxels}")
            })
            .collect();
        let mut op = self.clone();
        if let Op::Convolve { kernel, .. } = &mut op {
            *kernel = match orders {
                Some(orders) => format!("{name}:{}:{orders}", sigmas.join(",")),
                None => format!("{name}:{}", sigmas.join(",")),
            };
        }
        Ok(op)
    }

    /// The element type scipy.ndimage gives this operation's result where it is not the data's own: `label`'s
    /// int32 labels; the 0/1 masks of binary morphology, `fill-holes` and a threshold to two values a byte holds
    /// as uint8 (scipy's bool, which files hold as bytes). Outputs are written in it unless `--type` says
    /// otherwise ([`save_converted`](super::save_converted)); `transpose`, `permute` and `pad` keep it.
    ///
    /// ```
    /// use cliper::{Dtype, chain::Op};
    /// let threshold: Op = toml::from_str("op = 'threshold'\nvalue = 300")?;
    /// assert_eq!(threshold.result_dtype(), Some(Dtype::U8));
    /// let scaled: Op = toml::from_str("op = 'threshold'\nvalue = 300\nabove = 0.5")?;
    /// assert_eq!(scaled.result_dtype(), None); // 0.5 is no byte: the values stay as computed
    /// let label: Op = toml::from_str("op = 'label'")?;
    /// assert_eq!(label.result_dtype(), Some(Dtype::I32));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn result_dtype(&self) -> Option<Dtype> {
        let byte = |v: f64| v.fract() == 0.0 && (0.0..=255.0).contains(&v);
        match self {
            Op::Label { .. } => Some(Dtype::I32),
            Op::Threshold { above, below, .. } if byte(*above) && byte(*below) => Some(Dtype::U8),
            Op::BinaryMorphology { .. } | Op::FillHoles { .. } => Some(Dtype::U8),
            _ => None,
        }
    }

    /// Whether the result holds its input's values rearranged (so it keeps their [`Op::result_dtype`]).
    pub fn keeps_values(&self) -> bool {
        matches!(self, Op::Transpose { .. } | Op::Permute { .. } | Op::Pad { .. })
    }

    /// Whether the result of this operation on a colour image of shape `input` is still a colour image (of
    /// shape `output`): its channels stay on axis −3, with the same count. Reductions never are.
    pub fn keeps_colour(&self, input: &[usize], output: &[usize]) -> bool {
        let (ni, no) = (input.len(), output.len());
        let same_channels = ni >= 3 && no >= 3 && input.get(ni - 3) == output.get(no - 3);
        let planes_stay = match self {
            Op::Norm { .. } | Op::Dot { .. } => false,
            Op::Permute { axes } => {
                let n = axes.len();
                n >= 3 && axes.get(n - 3) == Some(&(n - 3)) && axes.iter().skip(n - 2).all(|&a| a + 2 >= n)
            }
            _ => true,
        };
        same_channels && planes_stay
    }

    /// Where the voxels of this operation's result lie, given the `geometry` of its (first) input of shape
    /// `input` and the result's shape `output` (docs/formats.md, "Geometry"): operations that keep the voxel
    /// grid keep it; `transpose` and `permute` reorder the spatial axes (a permutation that moves a spatial axis
    /// onto a non-spatial one loses it); `pad` moves the origin back by the widths before; a `valid` or `full`
    /// convolution moves it by the filter's centre; a norm or dot product along an axis that is not spatial (the
    /// time axis of a 4-D series, which takes the time step with it) keeps it; other reductions, matrix products
    /// and powers have none.
    ///
    /// ```
    /// use cliper::Geometry;
    /// use cliper::chain::{NormP, Op, Widths};
    /// let scan = Geometry::from_spacing([3.0, 0.5, 0.5]);
    /// let pad = Op::Pad { width: Widths(vec![(0, 0), (4, 4), (2, 2)]), mode: "edge".into(), value: 0.0 };
    /// let padded = pad.geometry(&scan, &[10, 64, 64], &[10, 72, 68], false).unwrap();
    /// assert_eq!(padded.origin, [-1.0, -2.0, 0.0]); // 2 columns (x) and 4 rows (y) of 0.5 mm before
    /// let t = Op::Transpose { conj: false }.geometry(&scan, &[10, 64, 32], &[10, 32, 64], false).unwrap();
    /// assert_eq!(t.direction[2], [0.0, 1.0, 0.0]); // columns now run along y
    /// assert!(Op::Power { n: 2, gemm_precision: Default::default() }.geometry(&scan, &[64, 64], &[64, 64], false).is_none());
    /// let series = Geometry { time_step: Some(2.0), ..scan };
    /// let mean = Op::Norm { p: NormP(1.0), axis: Some(0) }.geometry(&series, &[20, 10, 64, 64], &[10, 64, 64], false);
    /// assert_eq!(mean, Some(scan)); // summed over time: the volume's geometry, no time step
    /// assert!(Op::Norm { p: NormP(1.0), axis: Some(-1) }.geometry(&series, &[20, 10, 64, 64], &[20, 10, 64], false).is_none());
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn geometry(&self, geometry: &Geometry, input: &[usize], output: &[usize], colour: bool) -> Option<Geometry> {
        let spatial = Geometry::spatial_axes(input.len(), colour);
        // Geometry axis (slice 0, row 1, column 2) of each spatial array axis: a 2-D array's axes are rows and columns.
        let first = 3 - spatial.len().min(3);
        let shift = |offsets: &[f64]| {
            let mut by = [0.0; 3];
            for (g, &axis) in spatial.iter().enumerate() {
                if let (Some(slot), Some(&o)) = (by.get_mut(first + g), offsets.get(axis)) {
                    *slot = o;
                }
            }
            geometry.shifted(by)
        };
        match self {
            Op::Expression { .. } | Op::Window { .. } | Op::Threshold { .. } | Op::Clip { .. } => Some(*geometry),
            Op::GradientMagnitude { .. }
            | Op::RankFilter { .. }
            | Op::GreyMorphology { .. }
            | Op::BinaryMorphology { .. }
            | Op::DistanceTransform { .. }
            | Op::Label { .. }
            | Op::FillHoles { .. } => Some(*geometry),
            Op::Norm { axis: Some(axis), .. } | Op::Dot { axis: Some(axis), .. } => {
                // Along an axis that is not spatial (time, a batch) the volumes stay where they were; along a
                // spatial one no volume is left to place.
                let rank = isize::try_from(input.len()).ok()?;
                let axis = usize::try_from(if *axis < 0 { axis + rank } else { *axis }).ok()?;
                if axis >= input.len() || spatial.contains(&axis) {
                    return None;
                }
                let time_axis = spatial.first().and_then(|s| s.checked_sub(1)).filter(|_| spatial.len() == 3);
                Some(Geometry { time_step: geometry.time_step.filter(|_| Some(axis) != time_axis), ..*geometry })
            }
            Op::Norm { .. } | Op::Dot { .. } | Op::Matmul { .. } | Op::Power { .. } => None,
            Op::Zoom { .. }
            | Op::Shift { .. }
            | Op::Rotate { .. }
            | Op::AffineTransform { .. }
            | Op::SplineFilter { .. }
            | Op::MapCoordinates { .. } => resample_geometry(self, geometry, input, output, colour),
            Op::Transpose { .. } if input.len() >= 2 => Some(geometry.permuted([0, 2, 1])),
            Op::Transpose { .. } => None,
            Op::Permute { axes } => {
                let mut order = [0, 1, 2];
                for (g, &to) in spatial.iter().enumerate() {
                    let from = axes.get(to)?;
                    let k = spatial.iter().position(|s| s == from)?;
                    *order.get_mut(first + g)? = first + k;
                }
                Some(geometry.permuted(order))
            }
            Op::Pad { width, .. } => {
                let before: Vec<f64> = (0..input.len())
                    .map(|a| {
                        let w = if width.0.len() == 1 { width.0.first() } else { width.0.get(a) };
                        -(w.map_or(0, |w| w.0) as f64)
                    })
                    .collect();
                Some(shift(&before))
            }
            Op::Convolve { output: ConvOutput::Same, .. } => Some(*geometry),
            Op::Convolve { output: kind, mode, kernel, .. } => {
                // Correlation with a filter of w weights centres it on weight w/2 (scipy.ndimage's rule); a
                // convolution is a correlation with the weights reversed, centred on (w − 1)/2. A valid output
                // starts at the centre; a full one w − 1 before it.
                let correlation = matches!(mode, Some(ConvMode::Correlation))
                    || (mode.is_none() && !FileSpec::parse(kernel).path.exists());
                let offsets: Vec<f64> = input
                    .iter()
                    .zip(output)
                    .map(|(&n, &m)| {
                        let w = if *kind == ConvOutput::Valid { n + 1 - m.min(n) } else { m + 1 - n.min(m) };
                        let centre = if correlation { w / 2 } else { (w - 1) / 2 } as f64;
                        if *kind == ConvOutput::Valid { centre } else { centre - (w - 1) as f64 }
                    })
                    .collect();
                Some(shift(&offsets))
            }
        }
    }

    /// The process computing this operation from `inputs` into a newly allocated output.
    pub fn plan(&self, inputs: &[&AnyData]) -> Result<(Box<dyn Process>, AnyData)> {
        let wrong = || Error::invalid(self.name(), format!("takes {} input(s), got {}", self.arity(), inputs.len()));
        if let Some(expr) = self.expr() {
            let expr = expr?;
            if inputs.len() != expr.inputs().max(1) {
                return Err(wrong());
            }
            return elementwise(self, inputs, expr);
        }
        match (self, inputs) {
            (Op::GradientMagnitude { derivative, border, value, rank }, [x]) => {
                let border = match Border::scipy(border)? {
                    Border::Constant(_) => Border::Constant(*value),
                    other => other,
                };
                let params = GradientParams::default().derivative(derivative.parse()?).border(border).rank(spanned(
                    self.name(),
                    *rank,
                    x.shape(),
                )?);
                match x {
                    AnyData::F32(x) => gradient_magnitude(x, params),
                    AnyData::F64(x) => gradient_magnitude(x, params),
                    other => Err(Error::Type {
                        op: self.name().into(),
                        expected: "real data (scipy's gradient magnitudes are of real images)".into(),
                        got: other.kind().name().into(),
                    }),
                }
            }
            (
                Op::RankFilter { size, footprint, border, value, origin, rank, .. }
                | Op::GreyMorphology { size, footprint, border, value, origin, rank, .. },
                [x],
            ) => {
                let (kind, grey) = match self {
                    Op::RankFilter { filter, .. } => (rank_kind(filter)?, None),
                    Op::GreyMorphology { operation, .. } => (RankKind::Minimum, Some(grey_op(operation)?)),
                    _ => (RankKind::Median, None),
                };
                let window = WindowFields { size, footprint, border, value: *value, origin, rank: *rank };
                let mut params = rank_params(kind, window, x.shape())?;
                if let Op::GreyMorphology { structure: Some(file), .. } = self {
                    let spec = FileSpec::parse(file);
                    let host = spec.read()?.array;
                    let values = host.to_elements::<f64>(&spec.path)?;
                    if rank.is_none() && footprint.is_none() {
                        params.rank = Some(host.shape().len());
                    }
                    params = params.structure(host.shape(), &values.iter().copied().collect::<Vec<_>>())?;
                }
                match x {
                    AnyData::F32(x) => rank_process(x, params, grey),
                    AnyData::F64(x) => rank_process(x, params, grey),
                    other => Err(Error::Type {
                        op: self.name().into(),
                        expected: "real data (a rank needs ordered values)".into(),
                        got: other.kind().name().into(),
                    }),
                }
            }
            (
                Op::BinaryMorphology { operation, iterations, structure, connectivity, border_value, origin, rank },
                [x],
            ) => {
                let op = match operation.trim().to_ascii_lowercase().as_str() {
                    "erosion" => MorphologyOp::Erosion,
                    "dilation" => MorphologyOp::Dilation,
                    "opening" => MorphologyOp::Opening,
                    "closing" => MorphologyOp::Closing,
                    _ => {
                        return Err(Error::invalid(
                            "binary-morphology",
                            format!("`{operation}` is not an operation: give erosion, dilation, opening or closing"),
                        ));
                    }
                };
                if *border_value > 1 {
                    return Err(Error::invalid(self.name(), format!("border_value is 0 or 1, not {border_value}")));
                }
                let mut params = BinaryParams::new(op)
                    .iterations(*iterations)
                    .connectivity(*connectivity)
                    .border_value(*border_value == 1)
                    .rank(spanned(self.name(), *rank, x.shape())?);
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
                match x {
                    AnyData::F32(x) => binary_morphology(x, params),
                    AnyData::F64(x) => binary_morphology(x, params),
                    other => Err(Error::Type {
                        op: self.name().into(),
                        expected: "real data (non-zero is true)".into(),
                        got: other.kind().name().into(),
                    }),
                }
            }
            (Op::Label { connectivity, structure, rank } | Op::FillHoles { connectivity, structure, rank }, [x]) => {
                let nd = x.shape().len();
                let rank = match (rank, structure) {
                    (None, None) => Some(default_rank(self.name(), x.shape(), false, false)?),
                    (rank, _) => *rank,
                };
                let mut params = LabelParams::default().connectivity(*connectivity);
                if let Some(file) = structure {
                    params = params.structure(footprint_file(file)?);
                }
                if let Some(r) = rank {
                    params = params.rank(r);
                }
                let holes = matches!(self, Op::FillHoles { .. });
                let per_item: usize = x.shape().iter().rev().take(rank.unwrap_or(nd).min(nd)).product();
                match x {
                    AnyData::F32(_) if !holes && per_item > 1 << 24 => Err(Error::invalid(
                        self.name(),
                        format!(
                            "labels of items of {per_item} elements (shape {:?}) can exceed float32's exact \
                             integers (2^24): run in double precision (--precision double; precision = \"double\" \
                             in a pipeline)",
                            x.shape()
                        ),
                    )),
                    AnyData::F32(x) => label_process(x, params, holes),
                    AnyData::F64(x) => label_process(x, params, holes),
                    other => Err(Error::Type {
                        op: self.name().into(),
                        expected: "real data (non-zero is foreground)".into(),
                        got: other.kind().name().into(),
                    }),
                }
            }
            (Op::DistanceTransform { sampling, rank }, [x]) => {
                let rank = spanned(self.name(), *rank, x.shape())?;
                let sampling: Vec<f64> = match sampling.as_deref().map(str::trim) {
                    None => vec![1.0],
                    Some("voxel") => {
                        return Err(Error::invalid(
                            self.name(),
                            "sampling `voxel` needs the input's voxel spacing, which only DICOM, NIfTI, NRRD and \
                             MetaImage inputs carry; give the spacing as numbers (1,1,2.5)",
                        ));
                    }
                    Some(text) => text
                        .split(',')
                        .map(|t| {
                            t.trim().parse::<f64>().map_err(|_| {
                                Error::invalid("distance-transform", format!("`{t}` in `{text}` is not a spacing"))
                            })
                        })
                        .collect::<Result<_>>()?,
                };
                let params = DistanceParams::default().sampling(&sampling).rank(rank);
                match x {
                    AnyData::F32(x) => distance_transform(x, params),
                    AnyData::F64(x) => distance_transform(x, params),
                    other => Err(Error::Type {
                        op: self.name().into(),
                        expected: "real data (non-zero is foreground)".into(),
                        got: other.kind().name().into(),
                    }),
                }
            }
            (Op::MapCoordinates { .. }, [x, c]) => map_coordinates_plan(self, x, c),
            (Op::MapCoordinates { .. }, _) => Err(wrong()),
            (Op::Matmul { .. } | Op::Dot { .. }, [a, b]) => binary(self, a, b),
            (Op::Matmul { .. } | Op::Dot { .. }, _) => Err(wrong()),
            (_, [x]) => dispatch!(x, x => self.unary(x)),
            _ => Err(wrong()),
        }
    }

    /// The expression of an element-wise operation (`None` for the others), or the error parsing it.
    ///
    /// ```
    /// use cliper::chain::Op;
    /// let op = Op::Window { level: 40.0, width: 400.0, low: 0.0, high: 255.0 };
    /// assert_eq!(op.expr().unwrap()?.to_string(), "((minimum(maximum(((in0 - -160) / 400), 0), 1) * 255) + 0)");
    /// let e = Op::Expression { expr: "hypot(a, b)".into() }.expr().unwrap()?;
    /// assert_eq!(e.inputs(), 2);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn expr(&self) -> Option<Result<Expr>> {
        let x = Expr::input(0);
        match self {
            Op::Expression { expr } => Some(Expr::parse(expr, &EXPRESSION_NAMES).map(|e| {
                // `x` (the last name) is the first input too.
                e.substitute(&|k| Expr::Input(if k + 1 == EXPRESSION_NAMES.len() { 0 } else { k }))
            })),
            Op::Window { level, width, low, high } => Some(Ok(x.window(*level, *width) * (high - low) + *low)),
            Op::Threshold { value, above, below } => Some(Ok(x.threshold(*value, *above, *below))),
            Op::Clip { min, max } => Some(Ok(x.clip(*min, *max))),
            _ => None,
        }
    }

    fn unary<T: Kind>(&self, x: &XData<T>) -> Result<(Box<dyn Process>, AnyData)>
    where
        T::Real: Kind + FilterElement<T>,
    {
        let app = x.app();
        match self {
            Op::Zoom { .. }
            | Op::Shift { .. }
            | Op::Rotate { .. }
            | Op::AffineTransform { .. }
            | Op::SplineFilter { .. } => resample_plan(self, x),
            Op::Transpose { conj } => {
                let y = XData::<T>::zeros(app, &Transpose::<T>::output_shape(x.shape())?)?;
                let p: Box<dyn Process> =
                    if *conj { Box::new(ConjugateTranspose::new(x, &y)) } else { Box::new(Transpose::new(x, &y)) };
                Ok((p, T::wrap(y)))
            }
            Op::Permute { axes } => {
                let y = XData::<T>::zeros(app, &Permute::<T>::output_shape(x.shape(), axes)?)?;
                Ok((Box::new(Permute::new(x, &y, axes)), T::wrap(y)))
            }
            Op::Power { n, gemm_precision } => {
                let y = XData::<T>::zeros(app, &MatrixPower::<T>::output_shape(x.shape())?)?;
                Ok((Box::new(MatrixPower::new(x, &y, *n).precision(*gemm_precision)), T::wrap(y)))
            }
            Op::Norm { p, axis } => {
                let order = if p.0.is_infinite() { NormOrder::Inf } else { NormOrder::P(p.0) };
                let params = match axis {
                    Some(a) => NormParams::new(order).along(resolve_axis("norm", *a, x.shape())?),
                    None => NormParams::new(order),
                };
                let y = XData::<T::Real>::zeros(app, &NormN::<T>::output_shape(x.shape(), &params)?)?;
                Ok((Box::new(NormN::new(x, &y, params)), T::Real::wrap(y)))
            }
            Op::Pad { width, mode, value } => {
                let border = match Border::numpy(mode)? {
                    Border::Constant(_) => Border::Constant(*value),
                    other => other,
                };
                let params = PadParams::new(&width.0).border(border);
                let y = XData::<T>::zeros(app, &Pad::<T>::output_shape(x.shape(), &params)?)?;
                Ok((Box::new(Pad::new(x, &y, params)), T::wrap(y)))
            }
            Op::Convolve { kernel, mode, border, value, output, rank } => {
                let border = match Border::scipy(border)? {
                    Border::Constant(_) => Border::Constant(*value),
                    other => other,
                };
                let params = ConvParams::default().border(border).output(*output);
                match (load_filter::<T>(kernel, *rank, x.shape())?, mode) {
                    // scipy.ndimage.sobel and its kin correlate with the weights as they lie.
                    (KernelWeights::Named(_), Some(_)) => Err(Error::invalid(
                        "convolve",
                        format!(
                            "`{kernel}` is scipy.ndimage's filter of that name and takes no mode; --mode conv|corr is \
                             for filter files"
                        ),
                    )),
                    (KernelWeights::Named(f), None) => convolve(x, &f, params.mode(ConvMode::Correlation)),
                    (KernelWeights::Real(f), mode) => convolve(x, &f, params.mode(mode.unwrap_or_default())),
                    (KernelWeights::Same(f), mode) => convolve(x, &f, params.mode(mode.unwrap_or_default())),
                }
            }
            Op::Matmul { .. } | Op::Dot { .. } | Op::MapCoordinates { .. } => {
                Err(Error::invalid(self.name(), "takes two inputs"))
            }
            Op::GradientMagnitude { .. }
            | Op::RankFilter { .. }
            | Op::GreyMorphology { .. }
            | Op::BinaryMorphology { .. }
            | Op::DistanceTransform { .. }
            | Op::Label { .. }
            | Op::FillHoles { .. } => Err(Error::invalid(self.name(), "takes real data")),
            Op::Expression { .. } | Op::Window { .. } | Op::Threshold { .. } | Op::Clip { .. } => {
                elementwise(self, &[&T::wrap(x.clone())], self.expr().unwrap_or_else(|| Ok(Expr::input(0)))?)
            }
        }
    }
}

/// How many trailing axes an operation on an input of `shape` spans when not told: scipy.ndimage's default,
/// every axis, up to the three the kernels handle — of a colour image (channels on axis −3) the two image axes;
/// of a volume with a geometry (NIfTI, DICOM: `geometry`) and more than three axes, the three spatial ones, the
/// axes before them (time, echoes) being a batch. A plain array of more than three axes is refused, naming its
/// shape: which axes are spatial is the user's to say (`rank`).
///
/// ```
/// use cliper::chain::default_rank;
/// assert_eq!(default_rank("label", &[160, 256, 256], false, false)?, 3);
/// assert_eq!(default_rank("label", &[3, 256, 256], true, false)?, 2);
/// assert_eq!(default_rank("label", &[10, 160, 256, 256], false, true)?, 3); // a 4-D NIfTI: volumes in time
/// assert!(default_rank("label", &[2, 10, 16, 16], false, false).unwrap_err().to_string().contains("rank"));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn default_rank(op: &str, shape: &[usize], colour: bool, geometry: bool) -> Result<usize> {
    match shape.len() {
        _ if colour => Ok(2),
        nd @ 0..=3 => Ok(nd.max(1)),
        _ if geometry => Ok(3),
        nd => Err(Error::invalid(
            op,
            format!(
                "an array of shape {shape:?} has {nd} axes and filters span at most three: give the rank (--rank 1, 2 \
                 or 3; the last axes are filtered, the ones before are a batch)"
            ),
        )),
    }
}

/// `rank` when the step gives it, else [`default_rank`] for a plain array of `shape` (a chain has resolved colour
/// images and volumes with a geometry before planning: [`Op::resolved`]).
pub(super) fn spanned(op: &str, rank: Option<usize>, shape: &[usize]) -> Result<usize> {
    rank.map_or_else(|| default_rank(op, shape, false, false), Ok)
}

/// The gradient magnitude of real data into a new output.
fn gradient_magnitude<T: Kind + RealElement>(
    x: &XData<T>,
    params: GradientParams,
) -> Result<(Box<dyn Process>, AnyData)> {
    let y = XData::<T>::zeros(x.app(), &GradientMagnitude::<T>::output_shape(x.shape())?)?;
    Ok((Box::new(GradientMagnitude::new(x, &y, params)), T::wrap(y)))
}

/// The names an `expression` op gives its inputs, in order; `x` is the first input too.
const EXPRESSION_NAMES: [&str; 9] = ["a", "b", "c", "d", "e", "f", "g", "h", "x"];

/// An element-wise operation over arrays of one element type; the result is real when the expression is (the
/// modulus of complex data, a comparison).
fn elementwise(op: &Op, inputs: &[&AnyData], expr: Expr) -> Result<(Box<dyn Process>, AnyData)> {
    fn typed<T: Kind>(op: &Op, inputs: &[&AnyData], expr: Expr) -> Result<(Box<dyn Process>, AnyData)>
    where
        T::Real: Kind,
    {
        let mut arrays: Vec<&XData<T>> = Vec::with_capacity(inputs.len());
        for (k, a) in inputs.iter().enumerate() {
            let x = match a {
                AnyData::F32(x) => (x as &dyn std::any::Any).downcast_ref::<XData<T>>(),
                AnyData::F64(x) => (x as &dyn std::any::Any).downcast_ref::<XData<T>>(),
                AnyData::C32(x) => (x as &dyn std::any::Any).downcast_ref::<XData<T>>(),
                AnyData::C64(x) => (x as &dyn std::any::Any).downcast_ref::<XData<T>>(),
            };
            arrays.push(x.ok_or_else(|| Error::Type {
                op: op.name().into(),
                expected: format!("inputs of one element type (input 1 is {})", T::NAME),
                got: format!("input {} of {}", k + 1, a.kind().name()),
            })?);
        }
        let first = arrays.first().ok_or_else(|| Error::invalid(op.name(), "takes at least one input"))?;
        let shapes: Vec<&[usize]> = arrays.iter().map(|x| x.shape()).collect();
        let shape = Elementwise::<T>::output_shape(&shapes)?;
        if T::IS_COMPLEX && !expr.complex_result(true) {
            let y = XData::<T::Real>::zeros(first.app(), &shape)?;
            let p = Elementwise::new(&arrays, &y, expr);
            p.check()?;
            Ok((Box::new(p), T::Real::wrap(y)))
        } else {
            let y = XData::<T>::zeros(first.app(), &shape)?;
            let p = Elementwise::new(&arrays, &y, expr);
            p.check()?;
            Ok((Box::new(p), T::wrap(y)))
        }
    }
    match inputs.first() {
        Some(AnyData::F32(_)) => typed::<f32>(op, inputs, expr),
        Some(AnyData::F64(_)) => typed::<f64>(op, inputs, expr),
        Some(AnyData::C32(_)) => typed::<num_complex::Complex32>(op, inputs, expr),
        Some(AnyData::C64(_)) => typed::<Complex64>(op, inputs, expr),
        None => Err(Error::invalid(op.name(), "takes at least one input")),
    }
}

/// A convolution of `x` by `f` into a new output of the shape `params` give.
fn convolve<T: Kind, K: FilterElement<T>>(
    x: &XData<T>,
    f: &Filter<K>,
    params: ConvParams,
) -> Result<(Box<dyn Process>, AnyData)> {
    let y = XData::<T>::zeros(x.app(), &Convolution::<T, K>::output_shape(x.shape(), f.shape(), &params)?)?;
    Ok((Box::new(Convolution::new(x, f, &y, params)), T::wrap(y)))
}

/// Runs a two-input operation on arrays of one element type, or names the mismatch.
fn binary(op: &Op, a: &AnyData, b: &AnyData) -> Result<(Box<dyn Process>, AnyData)> {
    macro_rules! typed {
        ($a:ident, $b:ident) => {
            match op {
                Op::Matmul { ta, tb, ha, hb, gemm_precision } => {
                    matmul($a, $b, [*ta, *tb], [*ha, *hb], *gemm_precision)
                }
                Op::Dot { conj, axis } => dot($a, $b, *conj, *axis),
                _ => Err(Error::invalid(op.name(), "takes one input")),
            }
        };
    }
    match (a, b) {
        (AnyData::F32(a), AnyData::F32(b)) => typed!(a, b),
        (AnyData::F64(a), AnyData::F64(b)) => typed!(a, b),
        (AnyData::C32(a), AnyData::C32(b)) => typed!(a, b),
        (AnyData::C64(a), AnyData::C64(b)) => typed!(a, b),
        _ => Err(Error::Type {
            op: op.name().into(),
            expected: format!("both inputs of one element type (the first is {})", a.kind().name()),
            got: b.kind().name().into(),
        }),
    }
}

fn matmul<T: Kind>(
    a: &XData<T>,
    b: &XData<T>,
    transpose: [bool; 2],
    conjugate: [bool; 2],
    precision: GemmPrecision,
) -> Result<(Box<dyn Process>, AnyData)> {
    let op = |(t, h): (bool, bool), name: &str| match (t, h) {
        (true, true) => Err(Error::invalid("matmul", format!("t{name} and h{name} both given: pick one"))),
        (true, false) => Ok(MatOp::Transpose),
        (false, true) => Ok(MatOp::ConjTranspose),
        (false, false) => Ok(MatOp::None),
    };
    let [ta, tb] = transpose;
    let [ha, hb] = conjugate;
    let params = MatMulParams::default().op_a(op((ta, ha), "a")?).op_b(op((tb, hb), "b")?).precision(precision);
    let c = XData::<T>::zeros(a.app(), &MatMul::output_shape(a.shape(), b.shape(), &params)?)?;
    Ok((Box::new(MatMul::new(a, b, &c, params)), T::wrap(c)))
}

/// Axis `axis` of an array of `shape`, counting from the last when negative (numpy's rule); an error naming the
/// shape when there is no such axis.
fn resolve_axis(op: &str, axis: isize, shape: &[usize]) -> Result<usize> {
    let n = shape.len() as isize;
    let k = if axis < 0 { axis + n } else { axis };
    if (0..n).contains(&k) {
        Ok(k as usize)
    } else {
        Err(Error::invalid(op, format!("axis {axis} does not exist in an array of shape {shape:?} ({n} axes)")))
    }
}

fn dot<T: Kind>(a: &XData<T>, b: &XData<T>, conj: bool, axis: Option<isize>) -> Result<(Box<dyn Process>, AnyData)> {
    let kind = if conj { DotKind::Conjugated } else { DotKind::Plain };
    let params = match axis {
        Some(k) => DotParams::new(kind).along(resolve_axis("dot", k, a.shape())?),
        None => DotParams::new(kind),
    };
    let out = XData::<T>::zeros(a.app(), &Dot::<T>::output_shape(a.shape(), b.shape(), &params)?)?;
    Ok((Box::new(Dot::new(a, b, &out, params)), T::wrap(out)))
}

/// Filter weights for data of type `T`: real weights (named filters, real files) or weights of `T` itself
/// (complex filter files for complex data).
enum KernelWeights<T: Element> {
    /// A named filter's correlation weights.
    Named(Filter<T::Real>),
    Real(Filter<T::Real>),
    Same(Filter<T>),
}

/// A named filter (`gaussian:2`, `sobel-x`, …) or a filter file (`kernel.npy`, `k.mat:W`).
fn load_filter<T: Kind>(spec: &str, rank: Option<usize>, shape: &[usize]) -> Result<KernelWeights<T>> {
    let file = FileSpec::parse(spec);
    if !file.path.exists() {
        return Filter::named(spec, spanned("convolve", rank, shape)?).map(KernelWeights::Named).map_err(|e| match e {
            Error::InvalidArgument { op, reason } => Error::InvalidArgument {
                op,
                reason: format!("{reason}, or a filter file (no file {} exists)", file.path.display()),
            },
            other => other,
        });
    }
    let host = file.read()?.array;
    let shape = host.shape().to_vec();
    // Weights are parameters, rounded to the precision the data computes in (a float64 file — numpy's default —
    // filters f32 data as numpy's f32 arithmetic would); only their kind must fit: complex weights need complex data.
    if matches!(host, HostArray::C32(_) | HostArray::C64(_)) {
        if !T::IS_COMPLEX {
            return Err(Error::Type {
                op: format!("filter {file}"),
                expected: "real weights for real data".into(),
                got: host.dtype().name().into(),
            });
        }
        let values = host.to_elements::<Complex64>(&file.path)?;
        return Ok(KernelWeights::Same(Filter::new(&shape, values.iter().map(|&v| T::from_c64(v)).collect())?));
    }
    let values = host.to_elements::<f64>(&file.path)?;
    Ok(KernelWeights::Real(Filter::new(&shape, values.iter().map(|&v| T::Real::from_c64(v.into())).collect())?))
}

/// Window sizes: one for every axis, or one per axis (`5`, `[3, 5]`, `"3,5"`).
///
/// ```
/// assert_eq!("3,5".parse::<cliper::chain::Sizes>()?.0, vec![3, 5]);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Sizes(pub Vec<usize>);

impl std::str::FromStr for Sizes {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Sizes, String> {
        text.split(',')
            .map(|t| t.trim().parse::<usize>().map_err(|_| format!("`{text}` is not a size: give N or N,N,…")))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(Sizes)
    }
}

impl<'de> Deserialize<'de> for Sizes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Sizes, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(usize),
            Many(Vec<usize>),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::One(n) => Ok(Sizes(vec![n])),
            Raw::Many(v) => Ok(Sizes(v)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// The window fields of a `rank-filter` or `grey-morphology` step.
struct WindowFields<'a> {
    size: &'a Sizes,
    footprint: &'a Option<String>,
    border: &'a str,
    value: f64,
    origin: &'a Option<Vec<isize>>,
    rank: Option<usize>,
}

/// The rank-filter settings of a `rank-filter` or `grey-morphology` step.
fn rank_params(kind: RankKind, fields: WindowFields, shape: &[usize]) -> Result<RankParams> {
    let WindowFields { size, footprint, border, value, origin, rank } = fields;
    let border = match Border::scipy(border)? {
        Border::Constant(_) => Border::Constant(value),
        other => other,
    };
    let mut p = RankParams::new(kind).size(&size.0).border(border).rank(spanned("rank-filter", rank, shape)?);
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
fn footprint_file(file: &str) -> Result<Footprint> {
    let spec = FileSpec::parse(file);
    let host = spec.read()?.array;
    let values = host.to_elements::<f64>(&spec.path)?;
    Footprint::new(host.shape(), values.iter().map(|&v| v != 0.0).collect())
}

/// `median`, `minimum`, `maximum`, `percentile:P` or `rank:R`.
fn rank_kind(filter: &str) -> Result<RankKind> {
    let bad = || {
        Error::invalid(
            "rank-filter",
            format!("`{filter}` is not a rank filter: give median, minimum, maximum, percentile:P or rank:R"),
        )
    };
    let t = filter.trim().to_ascii_lowercase();
    Ok(match t.split_once(':') {
        None if t == "median" => RankKind::Median,
        None if t == "minimum" => RankKind::Minimum,
        None if t == "maximum" => RankKind::Maximum,
        Some(("percentile", p)) => RankKind::Percentile(p.trim().parse().map_err(|_| bad())?),
        Some(("rank", r)) => RankKind::Rank(r.trim().parse().map_err(|_| bad())?),
        _ => return Err(bad()),
    })
}

/// `erosion`, `dilation`, `opening` or `closing`.
fn grey_op(operation: &str) -> Result<GreyOp> {
    match operation.trim().to_ascii_lowercase().as_str() {
        "erosion" => Ok(GreyOp::Erosion),
        "dilation" => Ok(GreyOp::Dilation),
        "opening" => Ok(GreyOp::Opening),
        "closing" => Ok(GreyOp::Closing),
        "gradient" | "morphological-gradient" | "morphological_gradient" => Ok(GreyOp::Gradient),
        "laplace" | "morphological-laplace" | "morphological_laplace" => Ok(GreyOp::Laplace),
        "white-tophat" | "white_tophat" => Ok(GreyOp::WhiteTophat),
        "black-tophat" | "black_tophat" => Ok(GreyOp::BlackTophat),
        _ => Err(Error::invalid(
            "grey-morphology",
            format!(
                "`{operation}` is not an operation: give erosion, dilation, opening, closing, gradient, laplace, \
                 white-tophat or black-tophat"
            ),
        )),
    }
}

/// The distance transform of real data into a new output.
fn distance_transform<T: Kind + RealElement>(
    x: &XData<T>,
    params: DistanceParams,
) -> Result<(Box<dyn Process>, AnyData)> {
    let y = XData::<T>::zeros(x.app(), &DistanceTransform::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(DistanceTransform::new(x, &y, params)), T::wrap(y)))
}

/// Labels (or filled holes) of real data into a new output.
fn label_process<T: Kind + RealElement>(
    x: &XData<T>,
    params: LabelParams,
    holes: bool,
) -> Result<(Box<dyn Process>, AnyData)> {
    let y = XData::<T>::zeros(x.app(), &Label::<T>::output_shape(x.shape(), &params)?)?;
    let p: Box<dyn Process> =
        if holes { Box::new(FillHoles::new(x, &y, params)) } else { Box::new(Label::new(x, &y, params)) };
    Ok((p, T::wrap(y)))
}

/// Binary morphology of real data into a new 0/1 output.
fn binary_morphology<T: Kind + RealElement>(x: &XData<T>, params: BinaryParams) -> Result<(Box<dyn Process>, AnyData)> {
    let y = XData::<T>::zeros(x.app(), &BinaryMorphology::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(BinaryMorphology::new(x, &y, params)), T::wrap(y)))
}

/// A rank filter or grey morphology of real data into a new output.
fn rank_process<T: Kind + RealElement>(
    x: &XData<T>,
    params: RankParams,
    grey: Option<GreyOp>,
) -> Result<(Box<dyn Process>, AnyData)> {
    let y = XData::<T>::zeros(x.app(), x.shape())?;
    let p: Box<dyn Process> = match grey {
        Some(op) => {
            let p = GreyParams { op, window: params };
            GreyMorphology::<T>::output_shape(x.shape(), &p)?;
            Box::new(GreyMorphology::new(x, &y, p))
        }
        None => {
            RankFilter::<T>::output_shape(x.shape(), &params)?;
            Box::new(RankFilter::new(x, &y, params))
        }
    };
    Ok((p, T::wrap(y)))
}

// ---- The resampling steps (zoom, shift, rotate, affine-transform, map-coordinates, spline-filter): their
// parameters parsed, adapted to colour images and to voxel sizes in millimetres, their results' geometry, and
// their processes.

/// Numbers separated by commas: `"2"`, `"1,2,2"`.
fn numbers(op: &str, what: &str, text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|t| {
            let t = t.trim();
            t.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::invalid(op, format!("`{t}` in {what} `{text}` is not a number")))
        })
        .collect()
}

/// A matrix written as rows separated by `;` and values by `,`.
fn matrix_rows(text: &str) -> Result<Vec<Vec<f64>>> {
    text.split(';').map(|row| numbers("affine-transform", "matrix", row)).collect()
}

fn rows_text(rows: &[Vec<f64>]) -> String {
    rows.iter().map(|r| r.iter().map(f64::to_string).collect::<Vec<_>>().join(",")).collect::<Vec<_>>().join(";")
}

/// Per-axis values for a colour image of `nd` axes (channels on axis nd − 3): one value, or one per image axis,
/// become one per axis with `keep` on the channel axis; a value per axis must leave the channels alone.
fn colour_values(op: &str, what: &str, text: &str, nd: usize, keep: f64, shape: &[usize]) -> Result<String> {
    let v = numbers(op, what, text)?;
    let image: Vec<f64> = match v.as_slice() {
        [one] => vec![*one; 2],
        [a, b] => vec![*a, *b],
        all if all.len() == nd && all.get(nd - 3) == Some(&keep) => all.iter().skip(nd - 2).copied().collect(),
        _ => {
            return Err(Error::invalid(
                op,
                format!(
                    "{what} `{text}` for a colour image of shape {shape:?}: give one value or one per image axis (the \
                     channels on axis {} stay as they are)",
                    nd - 3
                ),
            ));
        }
    };
    let mut all = vec![keep; nd - 2];
    all.extend(image);
    Ok(all.iter().map(f64::to_string).collect::<Vec<_>>().join(","))
}

/// The step as it applies to a colour image of `shape`: interpolation on the two image axes, per channel.
fn resample_for_colour(op: &Op, shape: &[usize]) -> Result<Op> {
    let nd = shape.len();
    let name = op.name();
    let mut op = op.clone();
    match &mut op {
        Op::Zoom { zoom: Some(zoom), .. } => *zoom = colour_values(name, "zoom", zoom, nd, 1.0, shape)?,
        Op::Shift { shift, .. } => *shift = colour_values(name, "shift", shift, nd, 0.0, shape)?,
        Op::Rotate { axes, .. } => match axes.as_deref() {
            None => *axes = Some(vec![nd - 2, nd - 1]),
            Some(a) if a.contains(&(nd - 3)) => {
                return Err(Error::invalid(
                    name,
                    format!(
                        "axes {a:?} of a colour image of shape {shape:?} would rotate the channels (axis {})",
                        nd - 3
                    ),
                ));
            }
            Some(_) => {}
        },
        Op::AffineTransform { matrix, offset, output_shape, .. } => {
            // The matrix is for the two image axes: the channel axis joins as the identity.
            let rows = matrix_rows(matrix)?;
            let (m, b): (Vec<Vec<f64>>, Vec<f64>) = match (rows.len(), rows.first().map_or(0, Vec::len)) {
                (1, 2) => {
                    let d = rows.first().cloned().unwrap_or_default();
                    (
                        vec![vec![d.first().copied().unwrap_or(1.0), 0.0], vec![0.0, d.get(1).copied().unwrap_or(1.0)]],
                        vec![],
                    )
                }
                (2, 2) => (rows, vec![]),
                (2, 3) | (3, 3) => (
                    rows.iter().take(2).map(|r| r.iter().take(2).copied().collect()).collect(),
                    rows.iter().take(2).map(|r| r.get(2).copied().unwrap_or(0.0)).collect(),
                ),
                (r, c) => {
                    return Err(Error::invalid(
                        name,
                        format!(
                            "a {r}×{c} matrix for a colour image of shape {shape:?}: give the two image axes' matrix \
                             (2×2, 2×3, 3×3 homogeneous or one row of 2)"
                        ),
                    ));
                }
            };
            let offsets = match (b.is_empty(), offset.as_deref()) {
                (false, _) => b,
                (true, None) => vec![0.0, 0.0],
                (true, Some(t)) => {
                    let v = numbers(name, "offset", t)?;
                    match v.as_slice() {
                        [one] => vec![*one; 2],
                        [a, c] => vec![*a, *c],
                        _ => {
                            return Err(Error::invalid(name, format!("offset `{t}`: give one, or one per image axis")));
                        }
                    }
                }
            };
            let mut full: Vec<Vec<f64>> = Vec::with_capacity(nd);
            for i in 0..nd - 2 {
                full.push((0..nd).map(|j| if i == j { 1.0 } else { 0.0 }).collect());
            }
            for row in &m {
                let mut r = vec![0.0; nd - 2];
                r.extend(row.iter().copied());
                full.push(r);
            }
            *matrix = rows_text(&full);
            let mut off = vec![0.0; nd - 2];
            off.extend(offsets);
            *offset = Some(off.iter().map(f64::to_string).collect::<Vec<_>>().join(","));
            if let Some(s) = output_shape.as_mut().filter(|s| s.len() == 2) {
                let mut full_shape: Vec<usize> = shape.iter().take(nd - 2).copied().collect();
                full_shape.extend(s.iter().copied());
                *s = full_shape;
            }
        }
        Op::SplineFilter { axis: None, rank, .. } => *rank = Some(2),
        Op::SplineFilter { axis: Some(a), .. } if *a == nd as isize - 3 || *a == -3 => {
            return Err(Error::invalid(
                name,
                format!("axis {a} of a colour image of shape {shape:?} is its channels: filter an image axis"),
            ));
        }
        _ => {}
    }
    Ok(op)
}

/// A zoom given as a voxel size in mm turned into factors: per spatial axis, the sample count that covers the
/// input's extent at that voxel size, over the input's count.
fn resample_in_voxels(op: &Op, geometry: Option<&Geometry>, shape: &[usize], colour: bool) -> Result<Op> {
    let Op::Zoom { zoom, spacing: Some(spacing), grid_mode, order, mode, cval, prefilter } = op else {
        return Ok(op.clone());
    };
    if zoom.is_some() {
        return Err(Error::invalid("zoom", "give `zoom` (factors) or `spacing` (mm), not both"));
    }
    let Some(g) = geometry else {
        return Err(Error::invalid(
            "zoom",
            "`spacing` in mm needs the input's voxel size, which only DICOM, NIfTI, NRRD and MetaImage inputs carry; \
             give zoom factors instead",
        ));
    };
    let wanted = numbers("zoom", "spacing", spacing)?;
    if let Some(bad) = wanted.iter().find(|v| **v <= 0.0) {
        return Err(Error::invalid("zoom", format!("a voxel size must be positive, got {bad}")));
    }
    let spatial = Geometry::spatial_axes(shape.len(), colour);
    let first = 3 - spatial.len().min(3);
    let have = g.spacing_mm();
    let mut factors = vec![1.0; shape.len()];
    for (k, &axis) in spatial.iter().enumerate() {
        let want = match wanted.as_slice() {
            [one] => *one,
            many if many.len() == spatial.len() => many.get(k).copied().unwrap_or(1.0),
            many => {
                return Err(Error::invalid(
                    "zoom",
                    format!(
                        "{} voxel sizes for the {} spatial axes of an array of shape {shape:?}: give one, or one per \
                         spatial axis",
                        many.len(),
                        spatial.len()
                    ),
                ));
            }
        };
        // The count of samples that spans the same extent at the voxel size wanted: the first and last centres
        // stay (scipy's zoom), or in grid mode the outer edges; the factor is that count over the input's, so
        // the spacing comes out as asked whenever the extent is a whole number of voxels of it.
        let n = shape.get(axis).copied().unwrap_or(1);
        let extent = have.get(first + k).copied().unwrap_or(1.0) / want;
        let m = if *grid_mode {
            (n as f64 * extent).round().max(1.0)
        } else {
            ((n.saturating_sub(1)) as f64 * extent).round() + 1.0
        };
        if let Some(f) = factors.get_mut(axis) {
            *f = m / n.max(1) as f64;
        }
    }
    Ok(Op::Zoom {
        zoom: Some(factors.iter().map(f64::to_string).collect::<Vec<_>>().join(",")),
        spacing: None,
        grid_mode: *grid_mode,
        order: *order,
        mode: mode.clone(),
        cval: *cval,
        prefilter: *prefilter,
    })
}

/// Where the result's voxels lie: a zoom scales the spacing (and, in grid mode, moves the origin by the change of
/// half a voxel); a rotation that reshapes keeps the centres together; the other steps keep the grid (the content
/// moves on it); map-coordinates has none.
fn resample_geometry(
    op: &Op,
    geometry: &Geometry,
    input: &[usize],
    output: &[usize],
    colour: bool,
) -> Option<Geometry> {
    let spatial = Geometry::spatial_axes(input.len(), colour);
    let first = 3 - spatial.len().min(3);
    match op {
        Op::Zoom { grid_mode, .. } => {
            let mut g = *geometry;
            let mut by = [0.0; 3];
            for (k, &axis) in spatial.iter().enumerate() {
                let (n, m) = (*input.get(axis)? as f64, *output.get(axis)? as f64);
                let step = if *grid_mode {
                    n / m
                } else if m > 1.0 {
                    (n - 1.0) / (m - 1.0)
                } else {
                    1.0
                };
                if *grid_mode {
                    *by.get_mut(first + k)? = (step - 1.0) / 2.0;
                }
                *g.spacing.get_mut(first + k)? *= step;
            }
            let origin = geometry.shifted(by).origin;
            Some(Geometry { origin, ..g })
        }
        Op::Rotate { .. } => {
            let mut by = [0.0; 3];
            for (k, &axis) in spatial.iter().enumerate() {
                *by.get_mut(first + k)? = (*input.get(axis)? as f64 - *output.get(axis)? as f64) / 2.0;
            }
            Some(geometry.shifted(by))
        }
        Op::Shift { .. } | Op::AffineTransform { .. } | Op::SplineFilter { .. } => Some(*geometry),
        _ => None,
    }
}

fn interpolation(op: &str, order: usize, mode: &str, cval: f64, prefilter: bool) -> Result<Interpolation> {
    if order > 5 {
        return Err(Error::invalid(op, format!("spline order {order} is not supported: use 0 to 5")));
    }
    Ok(Interpolation::new(order).mode(InterpMode::parse(mode)?).cval(cval).prefilter(prefilter))
}

/// The resampling process of a one-input step.
fn resample_plan<T: Kind>(op: &Op, x: &XData<T>) -> Result<(Box<dyn Process>, AnyData)> {
    let name = op.name();
    let nd = x.shape().len();
    let params = match op {
        Op::Zoom { zoom, spacing, grid_mode, order, mode, cval, prefilter } => {
            let Some(zoom) = zoom else {
                return Err(Error::invalid(
                    name,
                    if spacing.is_some() {
                        "`spacing` in mm needs the input's voxel size (DICOM, NIfTI, NRRD, MetaImage); give zoom \
                         factors instead"
                    } else {
                        "give `zoom` (factors) or `spacing` (mm)"
                    },
                ));
            };
            let mut p = ResampleParams::zoom(&numbers(name, "zoom", zoom)?).grid_mode(*grid_mode);
            p.interpolation = interpolation(name, *order, mode, *cval, *prefilter)?;
            p
        }
        Op::Shift { shift, order, mode, cval, prefilter } => {
            let mut p = ResampleParams::shift(&numbers(name, "shift", shift)?);
            p.interpolation = interpolation(name, *order, mode, *cval, *prefilter)?;
            p
        }
        Op::Rotate { angle, axes, reshape, order, mode, cval, prefilter } => {
            let (a, b) = match axes.as_deref() {
                None => (1, 0),
                Some([a, b]) => (*a, *b),
                Some(other) => {
                    return Err(Error::invalid(name, format!("axes {other:?}: give the plane's two axes")));
                }
            };
            let mut p = ResampleParams::rotate(*angle).axes(a, b).reshape(*reshape);
            p.interpolation = interpolation(name, *order, mode, *cval, *prefilter)?;
            p
        }
        Op::AffineTransform { matrix, offset, output_shape, order, mode, cval, prefilter } => {
            let offset = match offset {
                Some(t) => numbers(name, "offset", t)?,
                None => vec![0.0],
            };
            let mut p = ResampleParams::affine(&matrix_rows(matrix)?, &offset);
            if let Some(shape) = output_shape {
                p = p.output_shape(shape);
            }
            p.interpolation = interpolation(name, *order, mode, *cval, *prefilter)?;
            p
        }
        Op::SplineFilter { order, mode, axis, rank } => {
            let mut p = SplineParams::new(*order).mode(InterpMode::parse(mode)?);
            if let Some(r) = rank {
                p = p.rank(*r);
            }
            if let Some(a) = axis {
                let resolved = if *a < 0 { nd as isize + a } else { *a };
                if resolved < 0 || resolved >= nd as isize {
                    return Err(Error::invalid(
                        name,
                        format!("axis {a} is out of range for an array of shape {:?}", x.shape()),
                    ));
                }
                p = p.axis(resolved as usize);
            }
            let y = XData::<T>::zeros(x.app(), &SplineFilter::<T>::output_shape(x.shape(), &p)?)?;
            return Ok((Box::new(SplineFilter::new(x, &y, p)), T::wrap(y)));
        }
        _ => return Err(Error::invalid(name, "is not a one-input resampling step")),
    };
    let y = XData::<T>::zeros(x.app(), &Resample::<T>::output_shape(x.shape(), &params)?)?;
    Ok((Box::new(Resample::new(x, &y, params)), T::wrap(y)))
}

/// map-coordinates of `x` at the coordinates `c` (real, of `x`'s precision).
fn map_coordinates_plan(op: &Op, x: &AnyData, c: &AnyData) -> Result<(Box<dyn Process>, AnyData)> {
    let Op::MapCoordinates { order, mode, cval, prefilter } = op else {
        return Err(Error::invalid(op.name(), "is not map-coordinates"));
    };
    let params = interpolation(op.name(), *order, mode, *cval, *prefilter)?;
    fn typed<T: Kind>(x: &XData<T>, c: &XData<T::Real>, params: Interpolation) -> Result<(Box<dyn Process>, AnyData)> {
        let y = XData::<T>::zeros(x.app(), &MapCoordinates::<T>::output_shape(x.shape(), c.shape(), &params)?)?;
        Ok((Box::new(MapCoordinates::new(x, c, &y, params)), T::wrap(y)))
    }
    match (x, c) {
        (AnyData::F32(x), AnyData::F32(c)) => typed(x, c, params),
        (AnyData::F64(x), AnyData::F64(c)) => typed(x, c, params),
        (AnyData::C32(x), AnyData::F32(c)) => typed(x, c, params),
        (AnyData::C64(x), AnyData::F64(c)) => typed(x, c, params),
        _ => Err(Error::Type {
            op: op.name().into(),
            expected: format!(
                "real coordinates of the data's precision ({} data takes {} coordinates)",
                x.kind().name(),
                if matches!(x, AnyData::F64(_) | AnyData::C64(_)) { "f64" } else { "f32" }
            ),
            got: c.kind().name().into(),
        }),
    }
}
