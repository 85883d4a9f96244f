//! Reductions (the reduce family): the p-`norm` and the `dot` product, of everything (a value, printed when no
//! output file is named) or along one axis.

use super::operation::{Inputs, Named, Operation, Planned, resolve_axis};
use super::params::NormP;
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
    const INPUTS: Inputs =
        Inputs { names: &[("INPUT", "Input file (or directory/glob)")], variadic: false, prints: true };
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
    const INPUTS: Inputs =
        Inputs { names: &[("A", "First operand"), ("B", "Second operand")], variadic: false, prints: true };
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
