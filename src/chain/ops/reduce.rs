//! Reductions (the reduce family): the p-`norm`, the `dot` product and numpy's `reduce` statistics (sum … argmax),
//! of everything (a value, printed when no output file is named) or along axes. One rule for all three: the output
//! is `-o FILE` (a pipeline step's `out`), and without one the result is printed.

use super::operation::{Inputs, Named, Operation, Planned, real_only, resolve_axis};
use super::params::NormP;
use super::params::by_name;
use super::reach::Reach;
use super::reach::whole;
use crate::Result;
use crate::chain::any_data::{AnyData, Kind, dispatch};
use crate::prelude::*;
use serde::Deserialize;

/// The p-norm of a whole array, or along one axis.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'norm'")?;
/// assert_eq!(step.name(), "norm");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper norm data/phantom_256.png\n  cliper norm data/phantom_256.png -p inf\n  cliper norm data/kspace.mat:kspace --axis 0 -o out/coil_norms.npy"
)]
#[serde(deny_unknown_fields)]
pub struct NormArgs {
    /// The order: a number ≥ 1 or inf.
    #[arg(short, default_value = "2")]
    #[serde(default)]
    pub p: NormP,
    /// Reduce along this axis instead of over everything; negative counts from the last (numpy's -1).
    #[arg(long, allow_negative_numbers = true)]
    #[serde(default)]
    pub axis: Option<isize>,
}

impl Named for NormArgs {
    const NAME: &'static str = "norm";
    const INPUTS: Inputs = Inputs {
        names: &[("INPUT", "Input file (or directory/glob)")],
        variadic: false,
        optional: false,
        prints: true,
    };
}

impl Operation for NormArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(x: &XData<T>, p: NormP, axis: Option<isize>) -> Result<Planned>
        where
            T::Real: Kind,
        {
            let order = if p.0.is_infinite() { NormOrder::Inf } else { NormOrder::P(p.0) };
            let params = match axis {
                Some(a) => NormParams::new(order).along(resolve_axis(NormArgs::NAME, a, x.shape())?),
                None => NormParams::new(order),
            };
            let y = XData::<T::Real>::zeros(x.app(), &NormN::<T>::output_shape(x.shape(), &params)?)?;
            Ok((Box::new(NormN::new(x, &y, params)), T::Real::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        dispatch!(x, x => typed(x, self.p, self.axis))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "reduces the whole array to a number"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        along_time(self.axis, geometry, input, colour)
    }
    fn planes_stay(&self) -> bool {
        false
    }
}

/// Dot product Σ aᵢ·bᵢ (Σ conj(aᵢ)·bᵢ with --conj), of everything or along one axis.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'dot'")?;
/// assert_eq!(step.name(), "dot");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper dot data/phantom_256.tif data/phantom_256.tif")]
#[serde(deny_unknown_fields)]
pub struct DotArgs {
    /// Conjugate the first operand.
    #[arg(long)]
    #[serde(default)]
    pub conj: bool,
    /// Reduce along this axis instead of over everything; negative counts from the last (numpy's -1).
    #[arg(long, allow_negative_numbers = true)]
    #[serde(default)]
    pub axis: Option<isize>,
}

impl Named for DotArgs {
    const NAME: &'static str = "dot";
    const INPUTS: Inputs = Inputs {
        names: &[("A", "First operand"), ("B", "Second operand")],
        variadic: false,
        optional: false,
        prints: true,
    };
}

impl Operation for DotArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(a: &XData<T>, b: &XData<T>, conj: bool, axis: Option<isize>) -> Result<Planned> {
            let kind = if conj { DotKind::Conjugated } else { DotKind::Plain };
            let params = match axis {
                Some(k) => DotParams::new(kind).along(resolve_axis(DotArgs::NAME, k, a.shape())?),
                None => DotParams::new(kind),
            };
            let out = XData::<T>::zeros(a.app(), &Dot::<T>::output_shape(a.shape(), b.shape(), &params)?)?;
            Ok((Box::new(Dot::new(a, b, &out, params)), T::wrap(out)))
        }
        let (conj, axis) = (self.conj, self.axis);
        same_kind(Self::NAME, inputs, |a, b| match (a, b) {
            (AnyData::F32(a), AnyData::F32(b)) => typed(a, b, conj, axis),
            (AnyData::F64(a), AnyData::F64(b)) => typed(a, b, conj, axis),
            (AnyData::C32(a), AnyData::C32(b)) => typed(a, b, conj, axis),
            (AnyData::C64(a), AnyData::C64(b)) => typed(a, b, conj, axis),
            _ => Err(Error::invalid(Self::NAME, "takes two inputs")),
        })
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "reduces the whole array to a number"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        along_time(self.axis, geometry, input, colour)
    }
    fn planes_stay(&self) -> bool {
        false
    }
}

/// A two-input operation's inputs, which must be of one element type (else the error names both).
pub(super) fn same_kind(
    op: &str,
    inputs: &[&AnyData],
    typed: impl FnOnce(&AnyData, &AnyData) -> Result<Planned>,
) -> Result<Planned> {
    let [a, b] = inputs else { return Err(Error::invalid(op, "takes two inputs")) };
    if a.kind() != b.kind() {
        return Err(Error::Type {
            op: op.into(),
            expected: a.kind().name(),
            got: b.kind().name(),
            note: Some("the second input: both inputs need one element type, the first's".into()),
        });
    }
    typed(a, b)
}

/// The geometry of a reduction along `axis`: along an axis that is not spatial (time, a batch) the volumes stay
/// where they were (a sum over time takes the time step with it); along a spatial one, or over everything, no
/// volume is left to place.
fn along_time(axis: Option<isize>, geometry: &Geometry, input: &[usize], colour: bool) -> Option<Geometry> {
    let spatial = Geometry::spatial_axes(input.len(), colour);
    let axis = resolve_axis("", axis?, input).ok()?;
    if spatial.contains(&axis) {
        return None;
    }
    let time_axis = spatial.first().and_then(|s| s.checked_sub(1)).filter(|_| spatial.len() == 3);
    Some(Geometry { time_step: geometry.time_step.filter(|_| Some(axis) != time_axis), ..*geometry })
}

/// numpy's reductions of real data: sum, prod, min, max, mean, var, std, argmin, argmax, over every axis or some.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'reduce'\noperation = 'mean'\naxis = [0]")?;
/// assert_eq!(step.name(), "reduce");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper reduce data/phantom_256.png --operation max\n  cliper reduce fmri.nii.gz --operation mean --axis 0 -o out/mean_volume.nii.gz\n  cliper reduce data/phantom_64x64x64.tif --operation argmax --axis 1,2 -o out/peaks.npy"
)]
#[serde(deny_unknown_fields)]
pub struct ReduceArgs {
    /// numpy's name: sum, prod, min, max, mean, var, std, argmin, argmax.
    #[arg(long)]
    #[serde(deserialize_with = "by_name")]
    pub operation: StatKind,
    /// The axes reduced, comma-separated (negative from the last; default every axis). argmin/argmax index the
    /// flattened reduced axes, as numpy does for one.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    #[serde(default)]
    pub axis: Option<Vec<isize>>,
    /// Keep the reduced axes with extent 1 (numpy's keepdims).
    #[arg(long)]
    #[serde(default)]
    pub keepdims: bool,
    /// numpy's ddof for var and std: the divisor is n − ddof.
    #[arg(long, default_value_t = 0.0)]
    #[serde(default)]
    pub ddof: f64,
}

impl ReduceArgs {
    /// The axes reduced, resolved against `shape` (every axis when none are given).
    fn resolved(&self, shape: &[usize]) -> Result<Option<Vec<usize>>> {
        let Some(axes) = &self.axis else { return Ok(None) };
        axes.iter().map(|&a| resolve_axis(Self::NAME, a, shape)).collect::<Result<Vec<_>>>().map(Some)
    }

    fn params(&self, shape: &[usize]) -> Result<StatParams> {
        let params = StatParams::new(self.operation).keepdims(self.keepdims).ddof(self.ddof);
        Ok(match self.resolved(shape)? {
            Some(axes) => params.axes(&axes),
            None => params,
        })
    }
}

impl Named for ReduceArgs {
    const NAME: &'static str = "reduce";
    const INPUTS: Inputs = Inputs {
        names: &[("INPUT", "Input file (or directory/glob)")],
        variadic: false,
        optional: false,
        prints: true,
    };
    fn check(&self) -> Result<()> {
        if !(self.ddof.is_finite() && self.ddof >= 0.0) {
            return Err(Error::invalid(Self::NAME, format!("ddof {} must be a finite number ≥ 0", self.ddof)));
        }
        Ok(())
    }
}

impl Operation for ReduceArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind + RealElement, U: Kind + RealElement>(x: &XData<T>, params: StatParams) -> Result<Planned> {
            let y = XData::<U>::zeros(x.app(), &Statistic::<T, U>::output_shape(x.shape(), &params)?)?;
            Ok((Box::new(Statistic::<T, U>::new(x, &y, params)), U::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = self.params(x.shape())?;
        let indices = self.operation.gives_indices();
        real_only(
            Self::NAME,
            x,
            "real data (numpy's reductions of complex data are not offered here)",
            |x| if indices { typed::<f32, f64>(x, params.clone()) } else { typed::<f32, f32>(x, params.clone()) },
            |x| typed::<f64, f64>(x, params.clone()),
        )
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "reduces whole axes"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        let axes = self.resolved(input).ok()??;
        axes.iter().try_fold(*geometry, |g, &a| along_time(Some(a as isize), &g, input, colour))
    }
    fn result_dtype(&self) -> Option<Dtype> {
        self.operation.gives_indices().then_some(Dtype::I64)
    }
    fn planes_stay(&self) -> bool {
        false
    }
}
