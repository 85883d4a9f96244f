//! Element-wise operations (the elementwise family): expressions, display windows, thresholds, clipping, and the
//! one-function shortcuts `abs`, `sqrt`, `log`. Back-to-back element-wise steps run as one kernel.

use super::operation::real_only;
use super::operation::{Inputs, Named, Operation, Planned, Shortcut};
use super::params::one;
use super::reach::Reach;
use super::reach::whole;
use super::threshold::{MethodName, ThresholdValueArgs, default_nbins, integer_type, parse_integer_type};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind};
use crate::prelude::*;
use num_complex::Complex64;
use serde::Deserialize;
use std::str::FromStr;

/// Element-wise maths (numpy's functions): an expression over the inputs, named a, b, c, … (x is a too).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'expression'\nexpr = 'abs(x)'")?;
/// assert_eq!(step.name(), "expression");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper expression gx.npy gy.npy out/magnitude.tif --expr 'hypot(a, b)'\n  cliper expression ct.nii.gz out/mask.nii.gz --expr 'where(x > 300, 1, 0)'\n\nOperators + - * / ** (or ^), comparisons > >= < <= == != (1 or 0), parentheses, pi; functions abs sqrt exp \
    log log10 sin cos tan floor ceil rint square sign real imag conj angle (one argument), minimum maximum power hypot \
    arctan2 (two), clip(x, low, high), where(condition, a, b), window(x, level, width), threshold(x, t)."
)]
#[serde(deny_unknown_fields)]
pub struct ExpressionArgs {
    /// The expression (quote it for the shell): `"sqrt(a*a + b*b)"`, `"where(x > 0, log(x), 0)"`.
    #[arg(long, short)]
    pub expr: String,
}

/// The names an `expression` op gives its inputs, in order; `x` is the first input too.
const EXPRESSION_NAMES: [&str; 9] = ["a", "b", "c", "d", "e", "f", "g", "h", "x"];

impl Named for ExpressionArgs {
    const NAME: &'static str = "expression";
    const ALIASES: &'static [&'static str] = &["expr"];
    const INPUTS: Inputs = Inputs {
        names: &[("FILES", "The input files (a, b, … in order), then the output file")],
        variadic: true,
        optional: false,
        prints: false,
    };
}

impl Operation for ExpressionArgs {
    fn arity(&self) -> usize {
        self.expr().and_then(|e| e.ok()).map_or(1, |e| e.inputs().max(1))
    }
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        plan_expr(Self::NAME, inputs, self.expr())
    }
    fn reach(&self, _shape: &[usize], _axis: usize) -> Result<Reach> {
        Reach::halo(0)
    }
    fn expr(&self) -> Option<Result<Expr>> {
        Some(Expr::parse(&self.expr, &EXPRESSION_NAMES).map(|e| {
            // `x` (the last name) is the first input too.
            e.substitute(&|k| Expr::Input(if k + 1 == EXPRESSION_NAMES.len() { 0 } else { k }))
        }))
    }
}

/// The values a display window maps onto, `LOW:HIGH` (`0:255`, `[0, 1]`).
///
/// ```
/// assert_eq!("-1:1".parse::<cliper::chain::DisplayRange>()?, cliper::chain::DisplayRange(-1.0, 1.0));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DisplayRange(pub f64, pub f64);

impl FromStr for DisplayRange {
    type Err = Error;
    fn from_str(text: &str) -> Result<DisplayRange> {
        text.split_once(':')
            .and_then(|(l, h)| Some(DisplayRange(l.trim().parse().ok()?, h.trim().parse().ok()?)))
            .ok_or_else(|| Error::invalid("window", format!("`{text}` is not LOW:HIGH (two numbers, as in 0:255)")))
    }
}

impl<'de> Deserialize<'de> for DisplayRange {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<DisplayRange, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Pair([f64; 2]),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Pair([low, high]) => Ok(DisplayRange(low, high)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

fn bytes() -> DisplayRange {
    DisplayRange(0.0, 255.0)
}

/// A CT/MR display window: LEVEL ± WIDTH/2 onto a display range (0:255 by default, saved as 8 bits).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'window'\nlevel = 40\nwidth = 400")?;
/// assert_eq!(step.name(), "window");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper window data/ct_series out/ct_soft_tissue.png --level 40 --width 400\n  cliper window ct.nii.gz out/lung.nii.gz --level -600 --width 1500 --range 0:1 --type f32\n\nValues below the window give the range's low end, above it the high end. Without --type the result is \
    written as u8 (rounded) when both ends of the range are bytes (0:255, 0:100); give --type (and --range) for \
    other outputs."
)]
#[serde(deny_unknown_fields)]
pub struct WindowArgs {
    /// The window's centre (HU for CT).
    #[arg(long, allow_negative_numbers = true)]
    pub level: f64,
    /// The window's width.
    #[arg(long)]
    pub width: f64,
    /// LOW:HIGH, the values the window's bottom and top map to.
    #[arg(long, default_value = "0:255", allow_hyphen_values = true)]
    #[serde(default = "bytes")]
    pub range: DisplayRange,
}

impl Named for WindowArgs {
    const NAME: &'static str = "window";
}

impl Operation for WindowArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        plan_expr(Self::NAME, inputs, self.expr())
    }
    fn reach(&self, _shape: &[usize], _axis: usize) -> Result<Reach> {
        Reach::halo(0)
    }
    fn expr(&self) -> Option<Result<Expr>> {
        let DisplayRange(low, high) = self.range;
        Some(Ok(Expr::input(0).window(self.level, self.width) * (high - low) + low))
    }
    fn default_output(&self) -> Option<(Dtype, Scale)> {
        // A display image: 8 bits, rounded, where both ends of the range are bytes.
        (is_byte(self.range.0) && is_byte(self.range.1)).then_some((Dtype::U8, Scale::Round))
    }
}

/// VALUE threshold: ABOVE (1) where a value exceeds it, else BELOW (0); or the image's own threshold by a METHOD.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'threshold'\nvalue = 1")?;
/// assert_eq!(step.name(), "threshold");
/// let otsu: cliper::chain::Op = toml::from_str("op = 'threshold'\nmethod = 'otsu'")?;
/// assert!(otsu.expr().is_none()); // found from the whole image, so it does not fuse
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper threshold data/ct_series out/bone.nii.gz --value 300\n  cliper threshold data/phantom_256.png out/mask.png --method otsu   (image > threshold_otsu(image))\n\nWith --method the threshold is scikit-image's of the whole image, as `threshold-value` finds it (its bins: \
    --nbins for float data, one per integer for 8- and 16-bit integer files)."
)]
#[serde(deny_unknown_fields)]
pub struct ThresholdArgs {
    /// The threshold.
    #[arg(long, allow_negative_numbers = true, required_unless_present = "method", conflicts_with = "method")]
    #[serde(default)]
    pub value: Option<f64>,
    /// Or the method that finds it from the image (scikit-image's): otsu, yen, triangle or li.
    #[arg(long)]
    #[serde(default)]
    pub method: Option<MethodName>,
    /// With --method: the number of histogram bins of float data.
    #[arg(long, default_value_t = 256)]
    #[serde(default = "default_nbins")]
    pub nbins: usize,
    /// The result above the threshold.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    #[serde(default = "one")]
    pub above: f64,
    /// The result at or below it.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    #[serde(default)]
    pub below: f64,
    /// With --method: the integer type the values were read as (u8, i8, u16, i16), one bin per integer; filled
    /// from the input file's type.
    #[arg(long, value_parser = parse_integer_type)]
    #[serde(default, deserialize_with = "integer_type")]
    pub integer_type: Option<Dtype>,
}

impl ThresholdArgs {
    /// The search that finds the threshold, for a step with a method.
    fn finder(&self) -> Option<ThresholdValueArgs> {
        self.method.map(|method| ThresholdValueArgs {
            method,
            nbins: self.nbins,
            classes: 3,
            integer_type: self.integer_type,
        })
    }
}

impl Named for ThresholdArgs {
    const NAME: &'static str = "threshold";
    fn check(&self) -> Result<()> {
        match (self.value, self.method) {
            (Some(_), Some(_)) | (None, None) => Err(Error::invalid(
                Self::NAME,
                "give either a value or a method (otsu, yen, triangle, li), one of them",
            )),
            (None, Some(MethodName::Multiotsu)) => Err(Error::invalid(
                Self::NAME,
                "multiotsu gives several thresholds: a two-valued mask takes otsu, yen, triangle or li",
            )),
            _ => self.finder().map_or(Ok(()), |f| f.check()),
        }
    }
}

impl Operation for ThresholdArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind + RealElement>(x: &XData<T>, params: ThresholdParams, values: (f64, f64)) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), x.shape())?;
            let real = |v: f64| T::from_c64(Complex64::new(v, 0.0));
            let process = ThresholdMask::new(x, &y, params, (real(values.0), real(values.1)));
            Ok((Box::new(process), T::wrap(y)))
        }
        let Some(finder) = self.finder() else { return plan_expr(Self::NAME, inputs, self.expr()) };
        self.check()?;
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let (params, values) = (finder.params(), (self.above, self.below));
        real_only(
            Self::NAME,
            x,
            "a threshold of real values",
            |x| typed(x, params, values),
            |x| typed(x, params, values),
        )
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        match self.method {
            Some(_) => Err(whole(Self::NAME, shape, "a threshold found by a method is the whole image's")),
            None => Reach::halo(0),
        }
    }
    fn expr(&self) -> Option<Result<Expr>> {
        self.value.map(|value| Ok(Expr::input(0).threshold(value, self.above, self.below)))
    }
    fn result_dtype(&self) -> Option<Dtype> {
        (is_byte(self.above) && is_byte(self.below)).then_some(Dtype::U8)
    }
    fn for_file_type(&self, dtype: Option<Dtype>) -> Self {
        match self.finder() {
            Some(finder) => ThresholdArgs { integer_type: finder.for_file_type(dtype).integer_type, ..self.clone() },
            None => self.clone(),
        }
    }
}

/// numpy.clip: values below MIN become MIN, above MAX become MAX.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'clip'\nmin = 0\nmax = 1")?;
/// assert_eq!(step.name(), "clip");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper clip ct.nii.gz out/clipped.nii.gz --min -1000 --max 2000")]
#[serde(deny_unknown_fields)]
pub struct ClipArgs {
    /// The lower bound.
    #[arg(long, allow_negative_numbers = true)]
    pub min: f64,
    /// The upper bound.
    #[arg(long, allow_negative_numbers = true)]
    pub max: f64,
}

impl Named for ClipArgs {
    const NAME: &'static str = "clip";
}

impl Operation for ClipArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        plan_expr(Self::NAME, inputs, self.expr())
    }
    fn reach(&self, _shape: &[usize], _axis: usize) -> Result<Reach> {
        Reach::halo(0)
    }
    fn expr(&self) -> Option<Result<Expr>> {
        Some(Ok(Expr::input(0).clip(self.min, self.max)))
    }
}

/// numpy.absolute: |x| (the modulus of complex data, which is real).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'abs'")?;
/// assert_eq!(step.name(), "expression");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper abs data/kspace.cfl out/magnitude.npy   (an `expression` step `abs(x)`)")]
#[serde(deny_unknown_fields)]
pub struct AbsArgs {}

impl Named for AbsArgs {
    const NAME: &'static str = "abs";
    const ALIASES: &'static [&'static str] = &["absolute"];
}

impl Shortcut for AbsArgs {
    type Target = ExpressionArgs;
    fn lower(self) -> Result<ExpressionArgs> {
        Ok(ExpressionArgs { expr: "abs(x)".into() })
    }
}

/// numpy.sqrt: the square root (NaN below 0 for real data; the principal root of complex data).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'sqrt'")?;
/// assert_eq!(step.name(), "expression");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper sqrt energy.npy out/rms.npy   (an `expression` step `sqrt(x)`)")]
#[serde(deny_unknown_fields)]
pub struct SqrtArgs {}

impl Named for SqrtArgs {
    const NAME: &'static str = "sqrt";
}

impl Shortcut for SqrtArgs {
    type Target = ExpressionArgs;
    fn lower(self) -> Result<ExpressionArgs> {
        Ok(ExpressionArgs { expr: "sqrt(x)".into() })
    }
}

/// numpy.log: the natural logarithm (−inf at 0, NaN below it for real data).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'log'")?;
/// assert_eq!(step.name(), "expression");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper log spectrum.npy out/log_spectrum.npy   (an `expression` step `log(x)`)")]
#[serde(deny_unknown_fields)]
pub struct LogArgs {}

impl Named for LogArgs {
    const NAME: &'static str = "log";
}

impl Shortcut for LogArgs {
    type Target = ExpressionArgs;
    fn lower(self) -> Result<ExpressionArgs> {
        Ok(ExpressionArgs { expr: "log(x)".into() })
    }
}

/// Whether `v` is a value a byte holds (a whole number in 0..=255).
fn is_byte(v: f64) -> bool {
    v.fract() == 0.0 && (0.0..=255.0).contains(&v)
}

/// The element-wise process of `expr` over `inputs` (all of one element type); the result is real when the
/// expression is (the modulus of complex data, a comparison).
fn plan_expr(op: &str, inputs: &[&AnyData], expr: Option<Result<Expr>>) -> Result<Planned> {
    let expr = expr.unwrap_or_else(|| Ok(Expr::input(0)))?;
    if inputs.len() != expr.inputs().max(1) {
        return Err(Error::invalid(op, format!("takes {} input(s), got {}", expr.inputs().max(1), inputs.len())));
    }
    match inputs.first() {
        Some(AnyData::F32(_)) => typed::<f32>(op, inputs, expr),
        Some(AnyData::F64(_)) => typed::<f64>(op, inputs, expr),
        Some(AnyData::C32(_)) => typed::<num_complex::Complex32>(op, inputs, expr),
        Some(AnyData::C64(_)) => typed::<Complex64>(op, inputs, expr),
        None => Err(Error::invalid(op, "takes at least one input")),
    }
}

fn typed<T: Kind>(op: &str, inputs: &[&AnyData], expr: Expr) -> Result<Planned>
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
            op: op.into(),
            expected: T::NAME,
            got: a.kind().name(),
            note: Some(format!("input {}: inputs need one element type, input 1's", k + 1)),
        })?);
    }
    let first = arrays.first().ok_or_else(|| Error::invalid(op, "takes at least one input"))?;
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
