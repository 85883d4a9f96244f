//! Fourier transforms as operations (the fft family, numpy.fft's semantics): `fft` (complex, forward or inverse),
//! `rfft` (real data and its half spectrum) and `fftshift`. Each mixes every element along its axes, so none runs
//! in tiles. A transform over a spatial axis leaves no image-space geometry: a spectrum has no voxel grid, and the
//! inverse transforms (`ifft`, `irfft`) give an image whose spectrum held none (a chain `fft` → filter → `ifft`
//! loses it). A transform over other axes only (time, coils) keeps the volumes' geometry.

use super::operation::{Named, Operation, Planned, fixed_shortcut};
use super::reach::{Reach, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind, dispatch};
use crate::prelude::*;
use num_complex::{Complex32, Complex64};
use serde::Deserialize;

/// The axes a transform takes: every one when the step leaves them out, negative ones counted from the end
/// (numpy's `axes`).
fn resolved_axes(name: &str, axes: &Option<Vec<isize>>, shape: &[usize]) -> Result<Option<Vec<usize>>> {
    let Some(axes) = axes else { return Ok(None) };
    let ndim = shape.len();
    axes.iter()
        .map(|&a| {
            let resolved = if a < 0 { a + ndim as isize } else { a };
            usize::try_from(resolved).ok().filter(|&r| r < ndim).ok_or_else(|| Error::Axis {
                op: name.into(),
                axis: a,
                shape: shape.to_vec(),
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// The geometry of a transform over `axes` (every axis when `None`): one over a spatial axis leaves a spectrum (or,
/// inverse, an image whose spectrum held no geometry), so none; one over other axes only (the time axis or the
/// coils of a series) keeps the volumes' geometry, without the time step when time was transformed.
fn off_space(axes: &Option<Vec<isize>>, geometry: &Geometry, input: &[usize], colour: bool) -> Option<Geometry> {
    let axes = resolved_axes("", axes, input).ok()??;
    let spatial = Geometry::spatial_axes(input.len(), colour);
    if axes.iter().any(|a| spatial.contains(a)) {
        return None;
    }
    let time_axis = spatial.first().and_then(|s| s.checked_sub(1)).filter(|_| spatial.len() == 3);
    let time_kept = time_axis.is_none_or(|t| !axes.contains(&t));
    Some(Geometry { time_step: geometry.time_step.filter(|_| time_kept), ..*geometry })
}

/// numpy's normalisation name, checked.
fn parsed_norm(norm: &str) -> Result<FftNorm> {
    FftNorm::numpy(norm)
}

fn backward() -> String {
    "backward".into()
}

/// numpy.fft.fftn / ifftn: the discrete Fourier transform of complex data over some axes (all by default).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'fft'\naxes = [-2, -1]\nnorm = 'ortho'")?;
/// assert_eq!(step.name(), "fft");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper fft kspace.npy out/image.npy --inverse --axes -2,-1")]
pub struct FftArgs {
    /// The inverse transform (numpy's ifftn).
    #[arg(long)]
    #[serde(default)]
    pub inverse: bool,
    /// The axes and the normalisation.
    #[command(flatten)]
    #[serde(flatten)]
    pub transform: FftAxesArgs,
}

/// What `fft` and its shortcut `ifft` share: the axes transformed and numpy's normalisation.
///
/// ```
/// let step: cliper::chain::InverseFftArgs = toml::from_str("axes = [-2, -1]\nnorm = 'ortho'")?;
/// assert_eq!((step.transform.axes, step.transform.norm.as_str()), (Some(vec![-2, -1]), "ortho"));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
pub struct FftAxesArgs {
    /// The axes transformed, comma-separated (negative from the end; default every axis).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    #[serde(default)]
    pub axes: Option<Vec<isize>>,
    /// numpy's norm: backward (the inverse divides by n), ortho or forward.
    #[arg(long, default_value = "backward")]
    #[serde(default = "backward")]
    pub norm: String,
}

impl Named for FftArgs {
    const NAME: &'static str = "fft";
    fn check(&self) -> Result<()> {
        parsed_norm(&self.transform.norm).map(|_| ())
    }
}

impl Operation for FftArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind + ComplexElement>(x: &XData<T>, params: FftParams) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), &Fft::<T>::output_shape(x.shape(), &params)?)?;
            Ok((Box::new(Fft::new(x, &y, params)), T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let direction = if self.inverse { FftDirection::Inverse } else { FftDirection::Forward };
        let mut params = FftParams::new(direction).norm(parsed_norm(&self.transform.norm)?);
        if let Some(axes) = resolved_axes(Self::NAME, &self.transform.axes, x.shape())? {
            params = params.axes(&axes);
        }
        match x {
            AnyData::C32(x) => typed::<Complex32>(x, params),
            AnyData::C64(x) => typed::<Complex64>(x, params),
            real => Err(Error::invalid(
                Self::NAME,
                format!("takes complex data, not {} (rfft transforms real data)", real.kind().name()),
            )),
        }
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "mixes every element along its axes"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        off_space(&self.transform.axes, geometry, input, colour)
    }
}

/// numpy.fft.rfftn / irfftn: the transform of real data to its half spectrum (the last transformed axis keeps
/// n/2 + 1 frequencies), or back.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'rfft'\ninverse = true\nlength = 255")?;
/// assert_eq!(step.name(), "rfft");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper rfft data/phantom_256.tif out/spectrum.npy")]
pub struct RealFftArgs {
    /// The inverse transform (numpy's irfftn): a half spectrum back to real data.
    #[arg(long)]
    #[serde(default)]
    pub inverse: bool,
    /// The axes, the normalisation and the inverse's length.
    #[command(flatten)]
    #[serde(flatten)]
    pub transform: RealFftAxesArgs,
}

/// What `rfft` and its shortcut `irfft` share: the axes, numpy's normalisation and the inverse's real length.
///
/// ```
/// let step: cliper::chain::InverseRealFftArgs = toml::from_str("length = 255")?;
/// assert_eq!((step.transform.length, step.transform.norm.as_str()), (Some(255), "backward"));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
pub struct RealFftAxesArgs {
    /// The axes transformed, comma-separated (negative from the end; the last listed is halved; default every
    /// axis).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    #[serde(default)]
    pub axes: Option<Vec<isize>>,
    /// numpy's norm: backward (the inverse divides by n), ortho or forward.
    #[arg(long, default_value = "backward")]
    #[serde(default = "backward")]
    pub norm: String,
    /// The inverse's real length along the halved axis (numpy's s[-1]; default 2·(m − 1)).
    #[arg(long)]
    #[serde(default)]
    pub length: Option<usize>,
}

impl Named for RealFftArgs {
    const NAME: &'static str = "rfft";
    fn check(&self) -> Result<()> {
        parsed_norm(&self.transform.norm).map(|_| ())
    }
}

impl Operation for RealFftArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn forward<T: Kind + ComplexElement<Real: Kind>>(x: &XData<T::Real>, params: RealFftParams) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), &RealFft::<T>::output_shape(x.shape(), &params)?)?;
            Ok((Box::new(RealFft::new(x, &y, params)), T::wrap(y)))
        }
        fn inverse<T: Kind + ComplexElement<Real: Kind>>(x: &XData<T>, params: RealFftParams) -> Result<Planned> {
            let y = XData::<T::Real>::zeros(x.app(), &InverseRealFft::<T>::output_shape(x.shape(), &params)?)?;
            Ok((Box::new(InverseRealFft::new(x, &y, params)), <T::Real as Kind>::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let mut params = RealFftParams::default().norm(parsed_norm(&self.transform.norm)?);
        if let Some(axes) = resolved_axes(Self::NAME, &self.transform.axes, x.shape())? {
            params = params.axes(&axes);
        }
        if let Some(length) = self.transform.length {
            params = params.length(length);
        }
        match (x, self.inverse) {
            (AnyData::F32(x), false) => forward::<Complex32>(x, params),
            (AnyData::F64(x), false) => forward::<Complex64>(x, params),
            (AnyData::C32(x), true) => inverse::<Complex32>(x, params),
            (AnyData::C64(x), true) => inverse::<Complex64>(x, params),
            (x, inverse) => Err(Error::invalid(
                Self::NAME,
                format!(
                    "{} takes {} data, not {}",
                    if inverse { "the inverse" } else { "the forward transform" },
                    if inverse { "complex (a half spectrum)" } else { "real" },
                    x.kind().name()
                ),
            )),
        }
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "mixes every element along its axes"))
    }
    fn geometry(&self, geometry: &Geometry, input: &[usize], _output: &[usize], colour: bool) -> Option<Geometry> {
        off_space(&self.transform.axes, geometry, input, colour)
    }
}

/// numpy.fft.fftshift / ifftshift: each axis rolled by ⌊n/2⌋ (the zero frequency to the centre), or back.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'fftshift'\ninverse = true")?;
/// assert_eq!(step.name(), "fftshift");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper fftshift out/spectrum.npy out/centred.npy --axes -2,-1")]
#[serde(deny_unknown_fields)]
pub struct FftShiftArgs {
    /// ifftshift: rolled back by ⌊n/2⌋ (the two differ for odd lengths).
    #[arg(long)]
    #[serde(default)]
    pub inverse: bool,
    /// The axes rolled, comma-separated (negative from the end; default every axis).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    #[serde(default)]
    pub axes: Option<Vec<isize>>,
}

impl Named for FftShiftArgs {
    const NAME: &'static str = "fftshift";
}

impl Operation for FftShiftArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: Kind>(x: &XData<T>, params: FftShiftParams) -> Result<Planned> {
            let y = XData::<T>::zeros(x.app(), x.shape())?;
            Ok((Box::new(FftShift::new(x, &y, params)), T::wrap(y)))
        }
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let mut params = if self.inverse { FftShiftParams::inverse() } else { FftShiftParams::default() };
        if let Some(axes) = resolved_axes(Self::NAME, &self.axes, x.shape())? {
            params = params.axes(&axes);
        }
        dispatch!(x, x => typed(x, params.clone()))
    }
    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        Err(whole(Self::NAME, shape, "moves elements across the image"))
    }
    fn keeps_values(&self) -> bool {
        true
    }
    fn geometry(&self, _geometry: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        None
    }
}

fixed_shortcut!(
    /// numpy.fft.ifftn: `fft --inverse`.
    InverseFftArgs, "ifft",
    "Example: cliper ifft kspace.npy out/image.npy --axes 1,2",
    transform: FftAxesArgs => FftArgs, |transform| FftArgs { inverse: true, transform }
);
fixed_shortcut!(
    /// numpy.fft.irfftn: `rfft --inverse`, a half spectrum back to real data.
    InverseRealFftArgs, "irfft",
    "Example: cliper irfft out/spectrum.npy out/image.npy --length 256",
    transform: RealFftAxesArgs => RealFftArgs, |transform| RealFftArgs { inverse: true, transform }
);
