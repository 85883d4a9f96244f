//! Automatic thresholds (the threshold family): `threshold-value`, scikit-image's Otsu, Yen, triangle and
//! multi-Otsu thresholds of a whole image, printed (or saved with `-o`).

use super::operation::{Inputs, Named, Operation, Planned, real_only};
use super::reach::{Reach, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind};
use crate::prelude::*;
use serde::Deserialize;
use std::str::FromStr;

/// A threshold method's name, as scikit-image's `threshold_<name>` functions spell it.
///
/// ```
/// use cliper::chain::MethodName;
/// assert_eq!("multiotsu".parse::<MethodName>()?, MethodName::Multiotsu);
/// assert_eq!("li".parse::<MethodName>()?, MethodName::Li);
/// assert!("isodata".parse::<MethodName>().unwrap_err().to_string().contains("otsu, yen, triangle, multiotsu or li"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum MethodName {
    /// `threshold_otsu`.
    Otsu,
    /// `threshold_yen`.
    Yen,
    /// `threshold_triangle`.
    Triangle,
    /// `threshold_multiotsu`.
    Multiotsu,
    /// `threshold_li`.
    Li,
}

impl FromStr for MethodName {
    type Err = Error;
    fn from_str(text: &str) -> Result<MethodName> {
        match text {
            "otsu" => Ok(MethodName::Otsu),
            "yen" => Ok(MethodName::Yen),
            "triangle" => Ok(MethodName::Triangle),
            "multiotsu" => Ok(MethodName::Multiotsu),
            "li" => Ok(MethodName::Li),
            other => Err(Error::invalid(
                ThresholdValueArgs::NAME,
                format!("unknown method `{other}`: otsu, yen, triangle, multiotsu or li"),
            )),
        }
    }
}

impl TryFrom<String> for MethodName {
    type Error = Error;
    fn try_from(text: String) -> Result<MethodName> {
        text.parse()
    }
}

pub(super) fn default_nbins() -> usize {
    256
}

fn default_classes() -> usize {
    3
}

/// The most bins an integer type's values can fill (one per value), for the types scikit-image bins that way
/// and the device's counts can hold.
fn integer_bins(dtype: Dtype) -> Option<usize> {
    match dtype {
        Dtype::U8 | Dtype::I8 => Some(1 << 8),
        Dtype::U16 | Dtype::I16 => Some(1 << 16),
        _ => None,
    }
}

/// scikit-image's automatic threshold of an image (skimage.filters.threshold_otsu, _yen, _triangle,
/// _multiotsu, _li): printed, or saved with -o.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'threshold-value'\nmethod = 'otsu'")?;
/// assert_eq!(step.name(), "threshold-value");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper threshold-value data/phantom_256.png --method otsu\n  cliper threshold-value ct.nii.gz --method multiotsu --classes 3 -o out/levels.npy\n\nThe histogram is scikit-image's: NBINS uniform bins over the image's range for float images; one bin per \
    integer from the minimum to the maximum for 8- and 16-bit integer images (NBINS is then ignored, as scikit-image \
    ignores it). The threshold is a bin centre; skimage's users write `image > threshold`. Li's method uses no bins: \
    it iterates over a float image's values (NaN left out, as scikit-image leaves them), over an integer image's \
    histogram."
)]
#[serde(deny_unknown_fields)]
pub struct ThresholdValueArgs {
    /// otsu, yen, triangle, multiotsu or li.
    #[arg(long, default_value = "otsu")]
    pub method: MethodName,
    /// The number of histogram bins of a float image.
    #[arg(long, default_value_t = 256)]
    #[serde(default = "default_nbins")]
    pub nbins: usize,
    /// multiotsu: the number of classes (it gives one threshold fewer).
    #[arg(long, default_value_t = 3)]
    #[serde(default = "default_classes")]
    pub classes: usize,
    /// The integer type the values were read as (u8, i8, u16, i16): one bin per integer. A pipeline and the
    /// command line fill it from the input file's type; give it for data that lost its type.
    #[arg(long, value_parser = parse_integer_type)]
    #[serde(default, deserialize_with = "integer_type")]
    pub integer_type: Option<Dtype>,
}

pub(super) fn parse_integer_type(text: &str) -> std::result::Result<Dtype, String> {
    let dtype = Dtype::parse(text).map_err(|e| e.to_string())?;
    integer_bins(dtype).map(|_| dtype).ok_or_else(|| format!("`{text}` is not u8, i8, u16 or i16"))
}

pub(super) fn integer_type<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Option<Dtype>, D::Error> {
    Option::<String>::deserialize(d)?.map(|t| parse_integer_type(&t).map_err(serde::de::Error::custom)).transpose()
}

impl ThresholdValueArgs {
    /// The process's parameters.
    pub fn params(&self) -> ThresholdParams {
        let method = match self.method {
            MethodName::Otsu => ThresholdMethod::Otsu,
            MethodName::Yen => ThresholdMethod::Yen,
            MethodName::Triangle => ThresholdMethod::Triangle,
            MethodName::Multiotsu => ThresholdMethod::MultiOtsu { classes: self.classes },
            MethodName::Li => ThresholdMethod::Li,
        };
        let bins = match self.integer_type.and_then(integer_bins) {
            Some(n) => HistogramBins::Integers(n),
            None => HistogramBins::Uniform(self.nbins),
        };
        ThresholdParams::new(method).bins(bins)
    }
}

impl Named for ThresholdValueArgs {
    const NAME: &'static str = "threshold-value";
    const INPUTS: Inputs = Inputs {
        names: &[("INPUT", "Input file (or directory/glob)")],
        variadic: false,
        optional: false,
        prints: true,
    };
    fn check(&self) -> Result<()> {
        ThresholdValue::<f32>::output_shape(&[], &self.params()).map(|_| ())
    }
}

impl Operation for ThresholdValueArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind + RealElement>(x: &XData<T>, params: ThresholdParams) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), &ThresholdValue::<T>::output_shape(x.shape(), &params)?)?;
            Ok((Box::new(ThresholdValue::new(x, &y, params)), T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = self.params();
        real_only(Self::NAME, x, "a threshold of real values", |x| typed(x, params), |x| typed(x, params))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "the histogram is the whole image's"))
    }
    fn geometry(&self, _geometry: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        None
    }
    fn planes_stay(&self) -> bool {
        false
    }
    fn for_file_type(&self, dtype: Option<Dtype>) -> Self {
        match dtype.filter(|d| integer_bins(*d).is_some()) {
            Some(d) if self.integer_type.is_none() => ThresholdValueArgs { integer_type: Some(d), ..self.clone() },
            _ => self.clone(),
        }
    }
}
