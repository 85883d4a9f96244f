//! The parameter types operations share, each parsed once from its text (a flag's value, a pipeline key's string)
//! or from a TOML number or list: window sizes, pad widths, norm orders, lists, borders by scipy's and numpy's names,
//! and the groups of fields several operations take (a border and its constant, a rank filter's window, a spline
//! interpolation's settings).

use crate::Result;
use crate::prelude::*;
use serde::Deserialize;
use std::str::FromStr;

/// A value given by its name (`conv`, `valid`, `reflect`, …), parsed by its `FromStr`.
pub(super) fn by_name<'de, D: serde::Deserializer<'de>, V: FromStr<Err = Error>>(
    d: D,
) -> std::result::Result<V, D::Error> {
    String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
}

/// An optional value given by its name, parsed by its `FromStr`.
pub(super) fn maybe_by_name<'de, D: serde::Deserializer<'de>, V: FromStr<Err = Error>>(
    d: D,
) -> std::result::Result<Option<V>, D::Error> {
    by_name(d).map(Some)
}

pub(super) fn yes() -> bool {
    true
}
pub(super) fn one() -> f64 {
    1.0
}
pub(super) fn one_count() -> usize {
    1
}

/// Numbers separated by commas (`"2"`, `"1,2,2"`), every one finite; the error names `what` and the text.
pub(super) fn numbers(op: &str, what: &str, text: &str) -> Result<Vec<f64>> {
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

/// Values given as one, as a list, or as text separated by commas: `5`, `[3, 5]`, `"3,5"` (pipeline files), `3,5`
/// (flags).
///
/// ```
/// use cliper::chain::List;
/// assert_eq!("0,2".parse::<List<usize>>()?.0, vec![0, 2]);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T: FromStr> FromStr for List<T> {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<List<T>, String> {
        text.split(',')
            .map(|t| t.trim().parse::<T>().map_err(|_| format!("`{text}` is not a list of numbers: give N or N,N,…")))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(List)
    }
}

impl<'de, T: FromStr + Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<List<T>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw<T> {
            One(T),
            Many(Vec<T>),
            Text(String),
        }
        match Raw::<T>::deserialize(d)? {
            Raw::One(n) => Ok(List(vec![n])),
            Raw::Many(v) => Ok(List(v)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// Window sizes: one for every axis, or one per axis (`5`, `[3, 5]`, `"3,5"`).
///
/// ```
/// assert_eq!("3,5".parse::<cliper::chain::Sizes>()?.0, vec![3, 5]);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Sizes(pub Vec<usize>);

impl FromStr for Sizes {
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
        List::<usize>::deserialize(d).map(|l| Sizes(l.0))
    }
}

impl Default for Sizes {
    /// scipy's size 3 along every axis.
    fn default() -> Sizes {
        Sizes(vec![3])
    }
}

/// A norm order: a number ≥ 1 or `inf`.
///
/// ```
/// assert_eq!("inf".parse::<cliper::chain::NormP>()?.0, f64::INFINITY);
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NormP(pub f64);

impl Default for NormP {
    /// The 2-norm.
    fn default() -> NormP {
        NormP(2.0)
    }
}

impl FromStr for NormP {
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

impl FromStr for Widths {
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

/// A border by scipy.ndimage's mode name (`reflect`, `mirror`, `nearest`, `wrap`, `constant`), parsed once.
///
/// ```
/// use cliper::{Border, chain::ScipyBorder};
/// assert_eq!("mirror".parse::<ScipyBorder>()?.0, Border::Mirror);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScipyBorder(pub Border);

impl FromStr for ScipyBorder {
    type Err = Error;
    fn from_str(name: &str) -> Result<ScipyBorder> {
        Border::scipy(name).map(ScipyBorder)
    }
}

impl<'de> Deserialize<'de> for ScipyBorder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<ScipyBorder, D::Error> {
        by_name(d)
    }
}

impl Default for ScipyBorder {
    /// scipy.ndimage's default, `reflect`.
    fn default() -> ScipyBorder {
        ScipyBorder(Border::Reflect)
    }
}

/// A border by numpy.pad's mode name (`constant`, `edge`, `reflect`, `symmetric`, `wrap`), parsed once.
///
/// ```
/// use cliper::{Border, chain::NumpyBorder};
/// assert_eq!("reflect".parse::<NumpyBorder>()?.0, Border::Mirror); // numpy's reflect is scipy's mirror
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NumpyBorder(pub Border);

impl FromStr for NumpyBorder {
    type Err = Error;
    fn from_str(name: &str) -> Result<NumpyBorder> {
        Border::numpy(name).map(NumpyBorder)
    }
}

impl<'de> Deserialize<'de> for NumpyBorder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<NumpyBorder, D::Error> {
        by_name(d)
    }
}

impl Default for NumpyBorder {
    /// numpy.pad's default, `constant`.
    fn default() -> NumpyBorder {
        NumpyBorder(Border::ZERO)
    }
}

/// A filter's border (scipy.ndimage's mode) and the constant of mode `constant` (scipy's `cval`).
///
/// ```
/// use cliper::{Border, chain::{Op, RankFilterArgs}};
/// let Op::RankFilter(RankFilterArgs { window, .. }) = toml::from_str("op = 'median'\nborder = 'constant'\nvalue = -1000")? else { unreachable!() };
/// assert_eq!(window.border.border(), Border::Constant(-1000.0));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Default, Deserialize, clap::Args)]
pub struct BorderArgs {
    /// scipy.ndimage border mode: reflect, mirror, nearest, wrap, constant.
    #[arg(long, default_value = "reflect")]
    #[serde(default)]
    pub border: ScipyBorder,
    /// The constant for border constant (scipy's cval; negative values as they are: --value -1000).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    #[serde(default)]
    pub value: f64,
}

impl BorderArgs {
    /// The border, with its constant where it is `constant`.
    pub fn border(&self) -> Border {
        match self.border.0 {
            Border::Constant(_) => Border::Constant(self.value),
            other => other,
        }
    }
}

/// The window (footprint) of a rank filter or grey morphology (scipy.ndimage's size, footprint, mode, cval, origin).
///
/// ```
/// use cliper::chain::{Op, RankFilterArgs};
/// let Op::RankFilter(RankFilterArgs { window, .. }) = toml::from_str("op = 'median'\nsize = [3, 5]")? else { unreachable!() };
/// assert_eq!(window.size.0, vec![3, 5]);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Default, Deserialize, clap::Args)]
pub struct FootprintArgs {
    /// The window's size: N for every axis, or one per axis (3,5).
    #[arg(long, default_value = "3")]
    #[serde(default)]
    pub size: Sizes,
    /// A footprint file (non-zero = in the window; overrides --size; its axes set --rank).
    #[arg(long)]
    #[serde(default)]
    pub footprint: Option<String>,
    /// The border and its constant.
    #[command(flatten)]
    #[serde(flatten)]
    pub border: BorderArgs,
    /// The window's shift (scipy's origin): one, or one per axis (-1,0).
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',')]
    #[serde(default)]
    pub origin: Option<Vec<isize>>,
    /// Axes the window spans, the last ones: 1 to 3 (default every axis, as scipy; 2 filters slice by slice).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
}

/// The interpolation settings of the resampling operations (scipy's names and defaults).
///
/// ```
/// use cliper::chain::{Op, ZoomArgs};
/// let Op::Zoom(ZoomArgs { interp, .. }) = toml::from_str("op = 'zoom'\nzoom = '2'\norder = 1\nprefilter = false")? else { unreachable!() };
/// assert_eq!((interp.order, interp.prefilter), (1, false));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
pub struct InterpArgs {
    /// The spline order: 0 (nearest sample), 1 (linear), 3 (cubic, the default) … 5.
    #[arg(long, default_value_t = 3)]
    #[serde(default = "three")]
    pub order: usize,
    /// scipy's mode: constant, grid-constant, nearest, reflect, mirror, wrap or grid-wrap.
    #[arg(long, default_value = "constant")]
    #[serde(default, deserialize_with = "by_name")]
    pub mode: InterpMode,
    /// The value outside for the constant modes.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    #[serde(default)]
    pub cval: f64,
    /// Take the input as B-spline coefficients already (scipy's prefilter=False; in a pipeline file
    /// `prefilter = false`).
    #[arg(long = "no-prefilter", action = clap::ArgAction::SetFalse)]
    #[serde(default = "yes")]
    pub prefilter: bool,
}

pub(super) fn three() -> usize {
    3
}

impl Default for InterpArgs {
    /// scipy's: cubic, `constant`, 0, prefiltered.
    fn default() -> InterpArgs {
        InterpArgs { order: 3, mode: InterpMode::Constant, cval: 0.0, prefilter: true }
    }
}

impl InterpArgs {
    /// The library's interpolation settings, or an error naming `op` for an order past 5.
    pub fn interpolation(&self, op: &str) -> Result<Interpolation> {
        if self.order > 5 {
            return Err(Error::invalid(op, format!("spline order {} is not supported: use 0 to 5", self.order)));
        }
        Ok(Interpolation::new(self.order).mode(self.mode).cval(self.cval).prefilter(self.prefilter))
    }
}

/// A command-line value given by one of `names` (listed in `--help`), parsed by the type's `FromStr`.
pub fn named<T>(names: &'static [&'static str]) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: FromStr<Err = Error> + Clone + Send + Sync + 'static,
{
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names).try_map(|name| name.parse::<T>())
}
