//! scipy.ndimage's Fourier filters as operations (the fourier family): `fourier-gaussian`, `fourier-uniform`,
//! `fourier-ellipsoid` and `fourier-shift`. Each multiplies a spectrum (the output of `fft`, or of `rfft` with
//! `--n`) by a transfer function; the frequency of an element depends on its place in the whole array, so none
//! runs in tiles, and a spectrum has no voxel grid, so the geometry is dropped.

use super::operation::{Named, Operation, Planned, resolve_axis};
use super::params::List;
use super::reach::{Reach, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind};
use crate::prelude::*;
use num_complex::{Complex32, Complex64};
use serde::Deserialize;

fn full_transform() -> i64 {
    -1
}

fn last_axis() -> isize {
    -1
}

/// The transform the input is, as scipy's `n` and `axis` say: a full FFT on every axis, or a real FFT along `axis`
/// of a signal of length `n`.
///
/// ```
/// // scipy.ndimage.fourier_gaussian(numpy.fft.rfft(x, axis=0), 2.0, n=37, axis=0) as a pipeline step
/// let step: cliper::chain::FourierGaussianArgs = toml::from_str("sigma = [2.0]\nn = 37\naxis = 0")?;
/// assert_eq!((step.spectrum.n, step.spectrum.axis), (37, 0));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
pub struct SpectrumArgs {
    /// -1: the input is a full FFT on every axis; N > 0: a real FFT (rfft) along --axis of a signal of N samples.
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    #[serde(default = "full_transform")]
    pub n: i64,
    /// The axis of the real FFT (negative from the end; used with --n).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    #[serde(default = "last_axis")]
    pub axis: isize,
}

impl SpectrumArgs {
    /// scipy's `n` and `axis` checked against `shape`: `n` = −1 (or any negative) is a full transform.
    fn params(&self, op: &str, kind: FourierKind, values: &[f64], shape: &[usize]) -> Result<FourierParams> {
        let params = FourierParams::new(kind, values);
        let axis = resolve_axis(op, self.axis, shape)?;
        match usize::try_from(self.n) {
            Err(_) => Ok(params),
            Ok(0) => Err(Error::invalid(op, "--n 0: give the real signal's length, or -1 for a full FFT")),
            Ok(n) => Ok(params.real(n, axis)),
        }
    }
}

/// Plans `kind` with `values` on `x`: real data stays real and complex complex, except the shift, whose result is
/// complex (complex128 for real input, as scipy's).
fn plan_fourier(op: &str, kind: FourierKind, values: &[f64], spectrum: &SpectrumArgs, x: &AnyData) -> Result<Planned> {
    fn typed<T: Kind, O: Kind>(x: &XData<T>, params: FourierParams) -> Result<Planned> {
        let y = XData::<O>::zeros(x.app(), x.shape())?;
        Ok((Box::new(FourierFilter::new(x, &y, params)), O::wrap(y)))
    }
    let params = spectrum.params(op, kind, values, x.shape())?;
    match (x, kind) {
        (AnyData::F32(x), FourierKind::Shift) => typed::<f32, Complex64>(x, params),
        (AnyData::F64(x), FourierKind::Shift) => typed::<f64, Complex64>(x, params),
        (AnyData::F32(x), _) => typed::<f32, f32>(x, params),
        (AnyData::F64(x), _) => typed::<f64, f64>(x, params),
        (AnyData::C32(x), _) => typed::<Complex32, Complex32>(x, params),
        (AnyData::C64(x), _) => typed::<Complex64, Complex64>(x, params),
    }
}

fn spectrum_reach(op: &str, shape: &[usize]) -> Result<Reach> {
    Err(whole(op, shape, "weighs each element by its frequency, which depends on its place in the whole spectrum"))
}

/// Defines one Fourier filter's parameters (its per-axis value under scipy's name) and its rules.
macro_rules! fourier_filter {
    ($(#[$doc:meta])* $args:ident, $name:literal, $kind:expr, $field:ident, $help:literal, $example:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
        #[command(long_about = None, after_help = $example)]
        pub struct $args {
            #[doc = $help]
            #[arg(long, allow_negative_numbers = true)]
            pub $field: List<f64>,
            /// The transform the input is.
            #[command(flatten)]
            #[serde(flatten)]
            pub spectrum: SpectrumArgs,
        }

        impl Named for $args {
            const NAME: &'static str = $name;
        }

        impl Operation for $args {
            fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
                let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
                plan_fourier(Self::NAME, $kind, &self.$field.0, &self.spectrum, x)
            }
            fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
                spectrum_reach(Self::NAME, shape)
            }
            fn geometry(&self, _g: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
                None
            }
        }
    };
}

fourier_filter!(
    /// scipy.ndimage.fourier_gaussian: a spectrum multiplied by a Gaussian's transform, exp(−2π²σ²f²) per axis.
    ///
    /// ```
    /// let step: cliper::chain::Op = toml::from_str("op = 'fourier-gaussian'\nsigma = [2, 1.5]\nn = 64")?;
    /// assert_eq!(step.name(), "fourier-gaussian");
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    FourierGaussianArgs,
    "fourier-gaussian",
    FourierKind::Gaussian,
    sigma,
    "The Gaussian's standard deviation in samples: one, or one per axis (S or S,S,…).",
    "Example: cliper fourier-gaussian spectrum.npy out/smoothed_spectrum.npy --sigma 4   (then fft --inverse)"
);

fourier_filter!(
    /// scipy.ndimage.fourier_uniform: a spectrum multiplied by a box's transform, sin(π·size·f)/(π·size·f) per axis.
    ///
    /// ```
    /// let step: cliper::chain::Op = toml::from_str("op = 'fourier-uniform'\nsize = 5")?;
    /// assert_eq!(step.name(), "fourier-uniform");
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    FourierUniformArgs,
    "fourier-uniform",
    FourierKind::Uniform,
    size,
    "The box's size in samples: one, or one per axis (S or S,S,…); a size <= 0 keeps only the zero frequency.",
    "Example: cliper fourier-uniform spectrum.npy out/boxed_spectrum.npy --size 20"
);

fourier_filter!(
    /// scipy.ndimage.fourier_ellipsoid: a spectrum multiplied by the transform of an ellipsoid (1-D: a box, 2-D: an
    /// ellipse, 3-D: an ellipsoid) with these diameters; at most three axes.
    ///
    /// ```
    /// let step: cliper::chain::Op = toml::from_str("op = 'fourier-ellipsoid'\nsize = [20, 10]")?;
    /// assert_eq!(step.name(), "fourier-ellipsoid");
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    FourierEllipsoidArgs,
    "fourier-ellipsoid",
    FourierKind::Ellipsoid,
    size,
    "The ellipsoid's diameter along each axis in samples: one, or one per axis (S or S,S,…).",
    "Example: cliper fourier-ellipsoid spectrum.npy out/disc_spectrum.npy --size 20"
);

fourier_filter!(
    /// scipy.ndimage.fourier_shift: a spectrum multiplied by exp(−2πi·shift·f) per axis, which shifts the image by
    /// that many samples (circularly); the result is complex (complex128 for real input, as scipy's).
    ///
    /// ```
    /// let step: cliper::chain::Op = toml::from_str("op = 'fourier-shift'\nshift = [2.5, -1]")?;
    /// assert_eq!(step.name(), "fourier-shift");
    /// # Ok::<(), toml::de::Error>(())
    /// ```
    FourierShiftArgs,
    "fourier-shift",
    FourierKind::Shift,
    shift,
    "The shift in samples: one, or one per axis (S or S,S,…).",
    "Example: cliper fourier-shift spectrum.npy out/shifted_spectrum.npy --shift 10.5,-3"
);
