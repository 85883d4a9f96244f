//! Features (the feature family): `peak-local-max`, scikit-image's `peak_local_max` as a coordinate table (a row
//! per peak in skimage's order, printed or saved with `-o`), and `peak-mask`, the same peaks as a mask image with
//! the input's geometry.

use super::operation::{Inputs, Named, Operation, Planned};
use super::params::NormP;
use super::rank::footprint_file;
use super::reach::{Reach, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, FileSpec, Kind};
use crate::prelude::*;
use serde::Deserialize;
use std::str::FromStr;

/// skimage's `exclude_border`: `true` (min_distance), `false` (0), a width, or one width per axis (`2,3`).
///
/// ```
/// use cliper::chain::BorderExclusion;
/// assert_eq!("false".parse::<BorderExclusion>()?.0, cliper::ExcludeBorder::Width(0));
/// assert_eq!("2,3".parse::<BorderExclusion>()?.0, cliper::ExcludeBorder::PerAxis(vec![2, 3]));
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct BorderExclusion(pub ExcludeBorder);

impl Default for BorderExclusion {
    fn default() -> BorderExclusion {
        BorderExclusion(ExcludeBorder::MinDistance)
    }
}

impl FromStr for BorderExclusion {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<BorderExclusion, String> {
        let bad = || format!("`{text}` is not a border exclusion: give true, false, N or N,N,… (one per axis)");
        match text.trim().to_ascii_lowercase().as_str() {
            "true" => Ok(BorderExclusion(ExcludeBorder::MinDistance)),
            "false" => Ok(BorderExclusion(ExcludeBorder::Width(0))),
            t if t.contains(',') => t
                .split(',')
                .map(|w| w.trim().parse::<usize>().map_err(|_| bad()))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map(|w| BorderExclusion(ExcludeBorder::PerAxis(w))),
            t => t.parse::<usize>().map(|w| BorderExclusion(ExcludeBorder::Width(w))).map_err(|_| bad()),
        }
    }
}

impl<'de> Deserialize<'de> for BorderExclusion {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<BorderExclusion, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Flag(bool),
            Width(usize),
            PerAxis(Vec<usize>),
            Text(String),
        }
        Ok(BorderExclusion(match Raw::deserialize(d)? {
            Raw::Flag(true) => ExcludeBorder::MinDistance,
            Raw::Flag(false) => ExcludeBorder::Width(0),
            Raw::Width(w) => ExcludeBorder::Width(w),
            Raw::PerAxis(w) => ExcludeBorder::PerAxis(w),
            Raw::Text(t) => t.parse::<BorderExclusion>().map_err(serde::de::Error::custom)?.0,
        }))
    }
}

fn one() -> usize {
    1
}

fn infinite_norm() -> NormP {
    NormP(f64::INFINITY)
}

/// skimage's parameters of `peak_local_max` (its names and defaults), shared by `peak-local-max` and `peak-mask`.
///
/// ```
/// use cliper::chain::{Op, PeakLocalMaxArgs};
/// let Op::PeakLocalMax(PeakLocalMaxArgs { peaks }) = toml::from_str("op = 'peak-local-max'\nexclude_border = [1, 2]")? else { unreachable!() };
/// assert_eq!((peaks.min_distance, peaks.exclude_border.0), (1, cliper::ExcludeBorder::PerAxis(vec![1, 2])));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
pub struct PeakArgs {
    /// Peaks lie at least this far apart (p-norm) and are maxima of a window 2·N+1 wide.
    #[arg(long, default_value = "1")]
    #[serde(default = "one")]
    pub min_distance: usize,
    /// The least value of a peak (default: the image's minimum).
    #[arg(long, allow_negative_numbers = true)]
    #[serde(default)]
    pub threshold_abs: Option<f64>,
    /// The least value of a peak as a fraction of the image's maximum (the larger threshold is taken).
    #[arg(long, allow_negative_numbers = true)]
    #[serde(default)]
    pub threshold_rel: Option<f64>,
    /// Peaks this near the edges are dropped: true (min_distance), false, N, or one N per axis (2,3).
    #[arg(long, default_value = "true")]
    #[serde(default)]
    pub exclude_border: BorderExclusion,
    /// At most this many peaks, the highest (default: all).
    #[arg(long)]
    #[serde(default)]
    pub num_peaks: Option<usize>,
    /// A footprint file (non-zero = in the window; as many axes as the image; overrides the 2·N+1 box).
    #[arg(long)]
    #[serde(default)]
    pub footprint: Option<String>,
    /// With labels: at most this many peaks per label (default: all).
    #[arg(long)]
    #[serde(default)]
    pub num_peaks_per_label: Option<usize>,
    /// The Minkowski p-norm of the spacing: 1 to inf.
    #[arg(long, default_value = "inf")]
    #[serde(default = "infinite_norm")]
    pub p_norm: NormP,
}

impl PeakArgs {
    fn params(&self, mark: PeakMark) -> Result<PeakParams> {
        let mut p = PeakParams::new(self.min_distance).exclude_border(self.exclude_border.0.clone()).mark(mark);
        p.threshold_abs = self.threshold_abs;
        p.threshold_rel = self.threshold_rel;
        p.num_peaks = self.num_peaks;
        p.num_peaks_per_label = self.num_peaks_per_label;
        p.p_norm = self.p_norm.0;
        if let Some(file) = &self.footprint {
            p = p.footprint(footprint_file(file)?);
        }
        Ok(p)
    }

    /// Refuses what no image can take (a p-norm below 1, a NaN threshold) before any file is read.
    fn check(&self) -> Result<()> {
        let mut p = PeakParams::new(self.min_distance);
        (p.threshold_abs, p.threshold_rel, p.p_norm) = (self.threshold_abs, self.threshold_rel, self.p_norm.0);
        p.check_values()
    }

    fn files(&self) -> Vec<(&'static str, &str)> {
        self.footprint.iter().map(|f| ("footprint", f.as_str())).collect()
    }
}

/// The peaks of one image type: the image, and optionally its labels.
fn peaks_of<T: Kind + RealElement>(
    image: &XData<T>,
    labels: Option<&XData<T>>,
    params: PeakParams,
) -> Result<XData<f64>> {
    PeakLocalMax::apply(image, labels, params)
}

/// The inputs as one real element type: the image, then the labels if given.
fn typed_inputs<R>(
    op: &str,
    inputs: &[&AnyData],
    f32: impl FnOnce(&XData<f32>, Option<&XData<f32>>) -> Result<R>,
    f64: impl FnOnce(&XData<f64>, Option<&XData<f64>>) -> Result<R>,
) -> Result<R> {
    match inputs {
        [AnyData::F32(x)] => f32(x, None),
        [AnyData::F64(x)] => f64(x, None),
        [AnyData::F32(x), AnyData::F32(l)] => f32(x, Some(l)),
        [AnyData::F64(x), AnyData::F64(l)] => f64(x, Some(l)),
        [x, l] if x.kind() != l.kind() => Err(Error::Type {
            op: op.into(),
            expected: x.kind().name(),
            got: l.kind().name(),
            note: Some("the labels: the image and the labels need one element type".into()),
        }),
        [first, ..] => Err(Error::TypeRule {
            op: op.into(),
            rule: "real values (peaks need ordered values)".into(),
            got: first.kind().name(),
        }),
        [] => Err(Error::invalid(op, "takes the image, and optionally its labels")),
    }
}

/// scikit-image's `peak_local_max`: the coordinates of the local maxima of an image (1 to 3 axes), a row per peak
/// in skimage's order (highest first, ties in C order; with LABELS label by label), columns `axis-0`, `axis-1`, …
/// — printed, or saved with `-o` as CSV, JSON or an array. skimage's rules exactly: the maximum filter over the
/// 2·min_distance+1 box or the footprint (mode nearest), no peak in a flat image, the thresholds, the border,
/// spacing by min_distance in the p-norm, num_peaks, and with LABELS each label's box searched alone. The maximum
/// filter and the candidates run on the device, their sort and spacing (sequential) on the host.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'peak-local-max'\nmin_distance = 3\nexclude_border = false")?;
/// assert_eq!(step.columns(2).unwrap(), ["axis-0", "axis-1"]);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper peak-local-max data/phantom_256.png --min-distance 5 --threshold-rel 0.5 -o out/peaks.csv\n  cliper peak-local-max image.nii.gz labels.nii.gz --num-peaks-per-label 1"
)]
#[serde(deny_unknown_fields)]
pub struct PeakLocalMaxArgs {
    /// skimage's parameters.
    #[command(flatten)]
    #[serde(flatten)]
    pub peaks: PeakArgs,
}

impl Named for PeakLocalMaxArgs {
    const NAME: &'static str = "peak-local-max";
    const INPUTS: Inputs = Inputs {
        names: &[("IMAGE", "Image (or directory/glob)"), ("LABELS", "Labels: each label's peaks found alone")],
        variadic: false,
        optional: true,
        prints: true,
    };
    fn check(&self) -> Result<()> {
        self.peaks.check()
    }
}

impl Operation for PeakLocalMaxArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let params = self.peaks.params(PeakMark::Order)?;
        // The table's length is the number of peaks: they are found now, and the step lists them.
        let order = typed_inputs(
            Self::NAME,
            inputs,
            |x, l| peaks_of(x, l, params.clone()),
            |x, l| peaks_of(x, l, params.clone()),
        )?;
        let table = XData::<f64>::zeros(
            order.app(),
            &PeakCoordinates::output_shape(order.shape(), PeakCoordinates::count(&order)?),
        )?;
        Ok((Box::new(PeakCoordinates::new(&order, &table)), f64::wrap(table)))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "peaks are sorted and spaced over the whole image"))
    }
    fn geometry(&self, _g: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        None
    }
    fn planes_stay(&self) -> bool {
        false
    }
    fn sized_by_data(&self) -> bool {
        true
    }
    fn columns(&self, ndim: usize) -> Option<Vec<String>> {
        Some((0..ndim).map(|k| format!("axis-{k}")).collect())
    }
    fn files(&self) -> Vec<(&'static str, &str)> {
        self.peaks.files()
    }
}

/// The peaks of `peak-local-max` as a mask (1 at each peak, uint8) of the image's shape and geometry — skimage's
/// `mask = np.zeros_like(image, bool); mask[tuple(coords.T)] = True`.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'peak-mask'\nmin_distance = 2\nlabels = 'labels.npy'")?;
/// assert_eq!(step.name(), "peak-mask");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper peak-mask data/mr_volume.nii.gz out/peaks.nii.gz --min-distance 3 --threshold-rel 0.3"
)]
#[serde(deny_unknown_fields)]
pub struct PeakMaskArgs {
    /// skimage's parameters.
    #[command(flatten)]
    #[serde(flatten)]
    pub peaks: PeakArgs,
    /// A label file of the image's shape: each label's peaks found alone (skimage's `labels`).
    #[arg(long)]
    #[serde(default)]
    pub labels: Option<String>,
}

/// A label file as an array of the image's element type on its device; a label that type cannot hold exactly
/// (above 2^24 in single precision) is refused, since rounding would merge labels.
fn labels_file<T: Kind + RealElement>(file: &str, like: &XData<T>) -> Result<XData<T>> {
    let spec = FileSpec::parse(file);
    let host = spec.read()?.array;
    let values = host.to_elements::<f64>(&spec.path)?;
    let typed: Vec<T> = values.iter().map(|&v| T::from_c64(Complex64::new(v, 0.0))).collect();
    if let Some((v, _)) = values.iter().zip(&typed).find(|(v, t)| t.to_c64().re != **v && !v.is_nan()) {
        return Err(Error::invalid(
            PeakMaskArgs::NAME,
            format!(
                "--labels {file} holds {v}, which the image's single precision cannot hold: add --precision double"
            ),
        ));
    }
    XData::from_slice(like.app(), host.shape(), &typed)
}

/// The peak mask of one image type.
fn mask_of<T: Kind + RealElement>(image: &XData<T>, labels: Option<&str>, params: PeakParams) -> Result<Planned> {
    let labels = labels.map(|file| labels_file(file, image)).transpose()?;
    let output = XData::<f64>::zeros(image.app(), &PeakLocalMax::<T>::output_shape(image.shape(), &params)?)?;
    Ok((Box::new(PeakLocalMax::new(image, labels.as_ref(), &output, params)), f64::wrap(output)))
}

impl Named for PeakMaskArgs {
    const NAME: &'static str = "peak-mask";
    fn check(&self) -> Result<()> {
        self.peaks.check()
    }
}

impl Operation for PeakMaskArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let params = self.peaks.params(PeakMark::Mask)?;
        let labels = self.labels.as_deref();
        typed_inputs(
            Self::NAME,
            inputs,
            |x, _| mask_of(x, labels, params.clone()),
            |x, _| mask_of(x, labels, params.clone()),
        )
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "peaks are sorted and spaced over the whole image"))
    }
    fn result_dtype(&self) -> Option<Dtype> {
        Some(Dtype::U8)
    }
    fn files(&self) -> Vec<(&'static str, &str)> {
        let labels = self.labels.iter().map(|f| ("labels", f.as_str()));
        self.peaks.files().into_iter().chain(labels).collect()
    }
}
