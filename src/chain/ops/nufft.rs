//! The non-uniform FFT (the nufft family) as steps on arrays, with SigPy's layout: `nufft-forward` (type 2, an
//! image to its values at non-uniform points) and `nufft-adjoint` (type 1, values at the points to an image), the
//! points a second input `COORD` `[points…, d]` in cycles per field of view. `cliper nufft` reads BART's files
//! (CFL layouts, `bart traj` trajectories) and runs the same transform.

use super::operation::{Inputs, Named, Operation, Planned};
use super::params::{Sizes, named};
use super::reach::{Reach, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind};
use crate::prelude::*;
use crate::{NufftAtCoords, NufftDirection, NufftKernel, NufftParams};
use serde::Deserialize;

fn tolerance() -> f64 {
    1e-6
}

/// The kernel of a NUFFT step (`--kernel es|bart`).
///
/// ```
/// use cliper::chain::KernelName;
/// assert_eq!("bart".parse::<KernelName>()?, KernelName::Bart);
/// assert!("kb".parse::<KernelName>().is_err());
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelName {
    /// FINUFFT's "exponential of semicircle", accurate to the tolerance.
    #[default]
    Es,
    /// BART 0.8's gridding (`bart nufft`'s own errors included; even sizes).
    Bart,
}

impl KernelName {
    /// The names `--kernel` takes.
    pub const NAMES: &'static [&'static str] = &["es", "bart"];
}

impl std::str::FromStr for KernelName {
    type Err = Error;
    fn from_str(name: &str) -> Result<KernelName> {
        match name {
            "es" => Ok(KernelName::Es),
            "bart" => Ok(KernelName::Bart),
            other => Err(Error::invalid("nufft", format!("kernel `{other}`: give es or bart"))),
        }
    }
}

/// What every NUFFT step takes: the accuracy and the kernel.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'nufft-forward'\ntolerance = 1e-9")?;
/// assert_eq!(step.name(), "nufft-forward");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, clap::Args)]
pub struct NufftStepArgs {
    /// The transform's relative accuracy (ℓ2 error over the outputs' norm, FINUFFT's definition); complex64 data
    /// reach 1e-6.
    #[arg(long, default_value_t = 1e-6)]
    #[serde(default = "tolerance")]
    pub tolerance: f64,
    /// es (FINUFFT's kernel, to the tolerance) or bart (BART 0.8's gridding, to reproduce `bart nufft`).
    #[arg(long, value_parser = named::<KernelName>(KernelName::NAMES), default_value = "es")]
    #[serde(default)]
    pub kernel: KernelName,
}

impl NufftStepArgs {
    /// The [`NufftParams`] these ask for; a tolerance other than the default is refused with BART's kernel, whose
    /// accuracy is fixed (`op` names the step).
    ///
    /// ```
    /// use cliper::chain::{KernelName, NufftStepArgs};
    /// let bart = NufftStepArgs { tolerance: 1e-6, kernel: KernelName::Bart };
    /// assert!(bart.params("nufft").is_ok());
    /// let tight = NufftStepArgs { tolerance: 1e-9, ..bart };
    /// assert!(tight.params("nufft").unwrap_err().to_string().contains("tolerance 0.000000001 with kernel bart"));
    /// ```
    pub fn params(&self, op: &str) -> Result<NufftParams> {
        match self.kernel {
            KernelName::Es => Ok(NufftParams::default().tolerance(self.tolerance)),
            KernelName::Bart if self.tolerance != tolerance() => Err(Error::invalid(
                op,
                format!(
                    "tolerance {} with kernel bart: BART's kernel has a fixed accuracy (about 1e-2 of the exact sums)",
                    self.tolerance
                ),
            )),
            KernelName::Bart => Ok(NufftParams::default().kernel(NufftKernel::Bart { periodic: false })),
        }
    }
}

/// The image or values, and the coordinates.
const DATA_AND_COORD: Inputs = Inputs {
    names: &[
        ("INPUT", "Complex: an image [batch…, N…] (forward) or values at the points [batch…, points…] (adjoint)"),
        (
            "COORD",
            "The points [points…, d], real, in cycles per field of view: coord[…, i] along the image's i-th last-d axis",
        ),
    ],
    variadic: false,
    optional: false,
    prints: false,
};

/// The step of `direction` on `inputs` (complex data, real coordinates of the same precision).
fn plan(
    op: &str,
    inputs: &[&AnyData],
    direction: NufftDirection,
    image: &[usize],
    params: NufftParams,
) -> Result<Planned> {
    fn typed<T: ComplexElement + Kind>(
        x: &XData<T>,
        c: &XData<T::Real>,
        direction: NufftDirection,
        image: &[usize],
        params: NufftParams,
    ) -> Result<Planned> {
        let shape = NufftAtCoords::<T, T::Real>::output_shape(x.shape(), c.shape(), direction, image)?;
        let y = XData::<T>::zeros(x.app(), &shape)?;
        Ok((Box::new(NufftAtCoords::new(x, c, &y, direction, params)), T::wrap(y)))
    }
    match inputs {
        [AnyData::C32(x), AnyData::F32(c)] => typed(x, c, direction, image, params),
        [AnyData::C64(x), AnyData::F64(c)] => typed(x, c, direction, image, params),
        [x, c] => Err(Error::TypeRule {
            op: op.into(),
            rule: format!(
                "complex data and real coordinates of its precision ({} data takes {} coordinates)",
                x.kind().name(),
                if matches!(x, AnyData::C64(_) | AnyData::F64(_)) { "f64" } else { "f32" }
            ),
            got: c.kind().name(),
        }),
        _ => Err(Error::invalid(op, "takes two inputs: the data and the coordinates")),
    }
}

/// The rules the NUFFT steps share: whole arrays (a point's value depends on every pixel), and no voxel grid
/// carried over (the values are at the points).
macro_rules! nufft_rules {
    () => {
        fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
            Err(whole(Self::NAME, shape, "every point's value depends on the whole image"))
        }
        fn geometry(&self, _: &Geometry, _: &[usize], _: &[usize], _: bool) -> Option<Geometry> {
            None
        }
    };
}

/// The type 2 NUFFT (SigPy's `nufft`, `bart nufft`): an image `[batch…, N…]` (its last `d` axes) to its values at
/// the points `[batch…, points…]`, `y_m = (1/√ΠN) Σ_r x_r exp(−2πi k_m·r/N)` with `r` centred (index `N/2` is 0).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'nufft-forward'")?;
/// assert_eq!(step.arity(), 2);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper nufft-forward image.npy coord.npy out/values.npy --tolerance 1e-9")]
#[serde(deny_unknown_fields)]
pub struct NufftForwardArgs {
    /// Accuracy and kernel.
    #[command(flatten)]
    #[serde(flatten)]
    pub nufft: NufftStepArgs,
}

impl Named for NufftForwardArgs {
    const NAME: &'static str = "nufft-forward";
    const ALIASES: &'static [&'static str] = &["nufft-type2"];
    const INPUTS: Inputs = DATA_AND_COORD;
}

impl Operation for NufftForwardArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        plan(Self::NAME, inputs, NufftDirection::Forward, &[], self.nufft.params(Self::NAME)?)
    }
    nufft_rules!();
}

/// The type 1 NUFFT, the forward's adjoint (SigPy's `nufft_adjoint`, `bart nufft -a`): values at the points
/// `[batch…, points…]` to an image `[batch…, shape…]`.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'nufft-adjoint'\nshape = '64,48'")?;
/// assert_eq!(step.name(), "nufft-adjoint");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper nufft-adjoint values.npy coord.npy out/image.npy --shape 64,48")]
#[serde(deny_unknown_fields)]
pub struct NufftAdjointArgs {
    /// The image's size along each of its `d` axes (SigPy's `oshape`, BART's `-d`).
    #[arg(long)]
    pub shape: Sizes,
    /// Accuracy and kernel.
    #[command(flatten)]
    #[serde(flatten)]
    pub nufft: NufftStepArgs,
}

impl Named for NufftAdjointArgs {
    const NAME: &'static str = "nufft-adjoint";
    const ALIASES: &'static [&'static str] = &["nufft-type1"];
    const INPUTS: Inputs = DATA_AND_COORD;
}

impl Operation for NufftAdjointArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        plan(Self::NAME, inputs, NufftDirection::Adjoint, &self.shape.0, self.nufft.params(Self::NAME)?)
    }
    nufft_rules!();
}
