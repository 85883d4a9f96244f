//! MRI reconstructions (the mri family) as steps on arrays: k-space `[frames…, coils, spatial…]` (complex, in
//! cliper's order, as a MAT variable or an NPY file holds it) and sensitivity maps `[coils, spatial…]`. The coil
//! images' combinations (`rsos`, `sense`), the iterative reconstructions of undersampled k-space (`cg-sense`,
//! `l1-wavelet`, `tv`, each as `bart pics` on the data as given: BART's `-w 1`), and the maps (`espirit`,
//! `walsh-maps`). `cliper recon` and `cliper ecalib` read k-space files with their BART conventions (CFL pairs,
//! maps and masks beside them) and run these same processes. None runs in tiles: each transforms whole images.

use super::operation::{Inputs, Named, Operation, Planned};
use super::reach::{Reach, whole};
use crate::Result;
use crate::chain::any_data::{AnyData, Kind};
use crate::prelude::*;
use num_complex::{Complex32, Complex64};
use serde::Deserialize;

fn two() -> usize {
    2
}
fn thirty() -> usize {
    30
}

/// How a k-space array is laid out: its last `spatial` axes are the image's, the one before them the coils.
///
/// ```
/// use cliper::chain::{Op, RsosArgs};
/// let Op::Rsos(RsosArgs { kspace, .. }) = toml::from_str("op = 'rsos'\nspatial = 3")? else { unreachable!() };
/// assert_eq!(kspace.spatial, 3);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, clap::Args)]
pub struct KSpaceArgs {
    /// The spatial axes of the k-space, the last ones (2 or 3); the axis before them is the coils', the ones before
    /// that frames.
    #[arg(long, default_value_t = 2)]
    #[serde(default = "two")]
    pub spatial: usize,
}

impl KSpaceArgs {
    fn kdata<T: ComplexElement>(self, x: &XData<T>) -> Result<KData<T>> {
        KData::new(x.clone(), self.spatial)
    }
}

/// The k-space and the maps, as every SENSE-type step reads them.
const KSPACE_AND_MAPS: Inputs = Inputs {
    names: &[
        ("KSPACE", "k-space [frames…, coils, spatial…], complex, centred"),
        ("MAPS", "Sensitivity maps [coils, spatial…], complex"),
    ],
    variadic: false,
    optional: false,
    prints: false,
};

/// One complex k-space input.
const KSPACE: Inputs = Inputs {
    names: &[("KSPACE", "k-space [frames…, coils, spatial…], complex, centred")],
    variadic: false,
    optional: false,
    prints: false,
};

/// The rules every MRI step shares: it runs on whole images (each transforms them: no tiles), and its result has no
/// voxel grid of the input's (k-space has none).
macro_rules! kspace_rules {
    () => {
        fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
            Err(whole(Self::NAME, shape, "reconstructs from k-space, a Fourier transform of whole images"))
        }
        fn geometry(&self, _: &Geometry, _: &[usize], _: &[usize], _: bool) -> Option<Geometry> {
            None
        }
    };
}

/// A step on complex k-space alone, in its precision.
fn on_kspace(
    op: &str,
    inputs: &[&AnyData],
    c32: impl FnOnce(&XData<Complex32>) -> Result<Planned>,
    c64: impl FnOnce(&XData<Complex64>) -> Result<Planned>,
) -> Result<Planned> {
    match inputs {
        [AnyData::C32(k)] => c32(k),
        [AnyData::C64(k)] => c64(k),
        [other] => Err(Error::TypeRule { op: op.into(), rule: "complex k-space".into(), got: other.kind().name() }),
        _ => Err(Error::invalid(op, "takes one input: the k-space")),
    }
}

/// A step on complex k-space and maps of one precision.
fn on_kspace_and_maps(
    op: &str,
    inputs: &[&AnyData],
    c32: impl FnOnce(&XData<Complex32>, &XData<Complex32>) -> Result<Planned>,
    c64: impl FnOnce(&XData<Complex64>, &XData<Complex64>) -> Result<Planned>,
) -> Result<Planned> {
    match inputs {
        [AnyData::C32(k), AnyData::C32(m)] => c32(k, m),
        [AnyData::C64(k), AnyData::C64(m)] => c64(k, m),
        [k, m] => Err(Error::TypeRule {
            op: op.into(),
            rule: format!("complex k-space and maps of one precision (the k-space is {})", k.kind().name()),
            got: m.kind().name(),
        }),
        _ => Err(Error::invalid(op, "takes two inputs: the k-space and the maps")),
    }
}

/// The image reconstruction of k-space `x` with `maps` by the process `make` builds over a new image of the shape
/// `shape` gives for the k-space (every SENSE-type step: the same k-space, maps and image, another solver).
fn with_maps<T: ComplexElement + Kind, P: Process + 'static>(
    kspace: KSpaceArgs,
    x: &XData<T>,
    maps: &XData<T>,
    shape: fn(&KData<T>) -> Result<Vec<usize>>,
    make: impl FnOnce(&KData<T>, &XData<T>) -> P,
) -> Result<Planned> {
    let k = kspace.kdata(x)?.with_sensitivity_maps(maps.clone())?;
    let image = XData::<T>::zeros(x.app(), &shape(&k)?)?;
    Ok((Box::new(make(&k, &image)), T::wrap(image)))
}

/// Root sum of squares of the coil images: √Σ|image_c|² (a magnitude image; no maps).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'rsos'")?;
/// assert_eq!(step.name(), "rsos");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper rsos data/kspace.mat:kspace out/rsos.npy")]
#[serde(deny_unknown_fields)]
pub struct RsosArgs {
    /// The k-space's layout.
    #[command(flatten)]
    #[serde(flatten)]
    pub kspace: KSpaceArgs,
    /// k-space is in numpy's FFT order (zero frequency first) rather than centred.
    #[arg(long)]
    #[serde(default)]
    pub uncentered: bool,
}

impl Named for RsosArgs {
    const NAME: &'static str = "rsos";
    const INPUTS: Inputs = KSPACE;
}

impl Operation for RsosArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: ComplexElement + Kind>(args: &RsosArgs, x: &XData<T>) -> Result<Planned>
        where
            T::Real: Kind,
        {
            let k = args.kspace.kdata(x)?;
            let image = XData::<T::Real>::zeros(x.app(), &RSoSRecon::<T>::output_shape(&k)?)?;
            let params = ReconParams::default().centered(!args.uncentered);
            Ok((Box::new(RSoSRecon::new(&k, &image, params)), T::Real::wrap(image)))
        }
        on_kspace(Self::NAME, inputs, |k| typed(self, k), |k| typed(self, k))
    }
    kspace_rules!();
}

/// SENSE coil combination: Σ image_c · conj(map_c), a complex image.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'sense'")?;
/// assert_eq!(step.arity(), 2);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper sense data/kspace.mat:kspace data/kspace.mat:sensitivity_maps out/sense.npy"
)]
#[serde(deny_unknown_fields)]
pub struct SenseArgs {
    /// The k-space's layout.
    #[command(flatten)]
    #[serde(flatten)]
    pub kspace: KSpaceArgs,
    /// k-space is in numpy's FFT order (zero frequency first) rather than centred.
    #[arg(long)]
    #[serde(default)]
    pub uncentered: bool,
}

impl Named for SenseArgs {
    const NAME: &'static str = "sense";
    const INPUTS: Inputs = KSPACE_AND_MAPS;
}

impl Operation for SenseArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: ComplexElement + Kind>(args: &SenseArgs, x: &XData<T>, maps: &XData<T>) -> Result<Planned> {
            let params = ReconParams::default().centered(!args.uncentered);
            with_maps(args.kspace, x, maps, SimpleMRIRecon::output_shape, |k, image| {
                SimpleMRIRecon::new(k, image, params)
            })
        }
        on_kspace_and_maps(Self::NAME, inputs, |k, m| typed(self, k, m), |k, m| typed(self, k, m))
    }
    kspace_rules!();
}

/// Iterative SENSE: conjugate gradients on (AᴴA + λI) x = Aᴴy, the mask being the samples that are not zero, as
/// `bart pics -l2 -r λ -i N -w 1`.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'cg-sense'\niters = 10\nlambda = 0.01")?;
/// assert_eq!(step.name(), "cg-sense");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper cg-sense k.npy maps.npy out/image.npy --iters 20 --lambda 0.01"
)]
#[serde(deny_unknown_fields)]
pub struct CgSenseArgs {
    /// The k-space's layout.
    #[command(flatten)]
    #[serde(flatten)]
    pub kspace: KSpaceArgs,
    /// The iterations.
    #[arg(long, default_value_t = 30)]
    #[serde(default = "thirty")]
    pub iters: usize,
    /// The Tikhonov weight λ (0: plain CG-SENSE).
    #[arg(long, default_value_t = 0.0)]
    #[serde(default)]
    pub lambda: f64,
}

impl Named for CgSenseArgs {
    const NAME: &'static str = "cg-sense";
    const INPUTS: Inputs = KSPACE_AND_MAPS;
    fn check(&self) -> Result<()> {
        weight(Self::NAME, Some(self.lambda)).map(|_| ())
    }
}

impl Operation for CgSenseArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: ComplexElement + Kind>(args: &CgSenseArgs, x: &XData<T>, maps: &XData<T>) -> Result<Planned> {
            let params = CgParams::new(args.iters).lambda(args.lambda);
            with_maps(args.kspace, x, maps, CgSense::output_shape, |k, image| CgSense::new(k, image, params))
        }
        on_kspace_and_maps(Self::NAME, inputs, |k, m| typed(self, k, m), |k, m| typed(self, k, m))
    }
    kspace_rules!();
}

/// The penalty weight λ, refused unless finite and not negative; required (`Some`) by the compressed-sensing steps.
fn weight(op: &str, lambda: Option<f64>) -> Result<f64> {
    match lambda {
        Some(l) if l.is_finite() && l >= 0.0 => Ok(l),
        Some(l) => Err(Error::invalid(op, format!("lambda {l}: the weight must be 0 or more"))),
        None => Err(Error::invalid(op, "needs lambda, the penalty's weight (as bart pics -r; e.g. 0.005)")),
    }
}

/// Compressed sensing: FISTA on ½|Ax − y|² + λ|Wx|₁ with Daubechies-2 wavelets W, as `bart pics -l1 -r λ -i N
/// -w 1` (cycle spinning as BART's unless turned off, which is `pics -n`).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'l1-wavelet'\nlambda = 0.005")?;
/// assert_eq!(step.name(), "l1-wavelet");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Example: cliper l1-wavelet k.npy maps.npy out/image.npy --lambda 0.005 --iters 50"
)]
#[serde(deny_unknown_fields)]
pub struct L1WaveletArgs {
    /// The k-space's layout.
    #[command(flatten)]
    #[serde(flatten)]
    pub kspace: KSpaceArgs,
    /// The weight λ of the wavelet penalty (required).
    #[arg(long)]
    pub lambda: f64,
    /// The iterations.
    #[arg(long, default_value_t = 30)]
    #[serde(default = "thirty")]
    pub iters: usize,
    /// No random shifts around the wavelet transform (BART's `pics -n`; in a pipeline file
    /// `cycle_spinning = false`).
    #[arg(long = "no-cycle-spinning", action = clap::ArgAction::SetFalse)]
    #[serde(default = "super::params::yes")]
    pub cycle_spinning: bool,
}

impl Named for L1WaveletArgs {
    const NAME: &'static str = "l1-wavelet";
    const INPUTS: Inputs = KSPACE_AND_MAPS;
    fn check(&self) -> Result<()> {
        weight(Self::NAME, Some(self.lambda)).map(|_| ())
    }
}

impl Operation for L1WaveletArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: ComplexElement + Kind>(args: &L1WaveletArgs, x: &XData<T>, maps: &XData<T>) -> Result<Planned> {
            let params = L1WaveletParams::new(args.lambda, args.iters).cycle_spinning(args.cycle_spinning);
            with_maps(args.kspace, x, maps, L1WaveletSense::output_shape, |k, image| {
                L1WaveletSense::new(k, image, params)
            })
        }
        on_kspace_and_maps(Self::NAME, inputs, |k, m| typed(self, k, m), |k, m| typed(self, k, m))
    }
    kspace_rules!();
}

/// Compressed sensing: ADMM on ½|Ax − y|² + λ·TV(x) (isotropic), as `bart pics -R T:7:0:λ -i N -w 1` (N counts the
/// inner CG iterations in all, as BART's -i does for ADMM).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'tv'\nlambda = 0.01")?;
/// assert_eq!(step.name(), "tv");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper tv k.npy maps.npy out/image.npy --lambda 0.01")]
#[serde(deny_unknown_fields)]
pub struct TvArgs {
    /// The k-space's layout.
    #[command(flatten)]
    #[serde(flatten)]
    pub kspace: KSpaceArgs,
    /// The weight λ of the total variation (required).
    #[arg(long)]
    pub lambda: f64,
    /// The inner CG iterations in all.
    #[arg(long, default_value_t = 30)]
    #[serde(default = "thirty")]
    pub iters: usize,
}

impl Named for TvArgs {
    const NAME: &'static str = "tv";
    const INPUTS: Inputs = KSPACE_AND_MAPS;
    fn check(&self) -> Result<()> {
        weight(Self::NAME, Some(self.lambda)).map(|_| ())
    }
}

impl Operation for TvArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: ComplexElement + Kind>(args: &TvArgs, x: &XData<T>, maps: &XData<T>) -> Result<Planned> {
            let params = TvParams::new(args.lambda, args.iters);
            with_maps(args.kspace, x, maps, TvSense::output_shape, |k, image| TvSense::new(k, image, params))
        }
        on_kspace_and_maps(Self::NAME, inputs, |k, m| typed(self, k, m), |k, m| typed(self, k, m))
    }
    kspace_rules!();
}

/// ESPIRiT's settings, as `bart ecalib` names them.
///
/// ```
/// use cliper::chain::{EspiritArgs, Op};
/// let Op::Espirit(EspiritArgs { settings, .. }) = toml::from_str("op = 'espirit'\ncrop = 0.9")? else { unreachable!() };
/// assert_eq!(settings.params().crop, 0.9);
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, clap::Args)]
pub struct EspiritSettings {
    /// espirit: maps are 0 where the eigenvalue is below this (`bart ecalib -c`).
    #[arg(long, default_value_t = crop())]
    #[serde(default = "crop")]
    pub crop: f64,
    /// espirit: the calibration region's largest extent per axis (`bart ecalib -r`).
    #[arg(long, default_value_t = calibration())]
    #[serde(default = "calibration")]
    pub calibration: usize,
    /// espirit: the kernel's extent per axis (`bart ecalib -k`).
    #[arg(long, default_value_t = kernel_size())]
    #[serde(default = "kernel_size")]
    pub kernel_size: usize,
    /// espirit: kernels are kept while σᵢ/σ₀ exceeds √THRESHOLD (`bart ecalib -t`).
    #[arg(long, default_value_t = threshold())]
    #[serde(default = "threshold")]
    pub threshold: f64,
}

// ESPIRiT's defaults are the library's (`EspiritParams::default`), for flags and step keys alike.
fn crop() -> f64 {
    EspiritParams::default().crop
}
fn calibration() -> usize {
    EspiritParams::default().calibration
}
fn kernel_size() -> usize {
    EspiritParams::default().kernel
}
fn threshold() -> f64 {
    EspiritParams::default().threshold
}

impl EspiritSettings {
    /// The library's parameters.
    pub fn params(self) -> EspiritParams {
        let EspiritSettings { crop, calibration, kernel_size, threshold } = self;
        EspiritParams { crop, calibration, kernel: kernel_size, threshold, ..EspiritParams::default() }
    }
}

/// Coil sensitivity maps `[coils, spatial…]` from k-space's fully sampled centre by ESPIRiT, as `bart ecalib -m1`.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'ecalib-maps'\ncalibration = 20")?;
/// assert_eq!(step.name(), "espirit");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper espirit data/kspace.mat:kspace out/maps.npy --crop 0.9")]
#[serde(deny_unknown_fields)]
pub struct EspiritArgs {
    /// The k-space's layout.
    #[command(flatten)]
    #[serde(flatten)]
    pub kspace: KSpaceArgs,
    /// ESPIRiT's settings.
    #[command(flatten)]
    #[serde(flatten)]
    pub settings: EspiritSettings,
}

impl Named for EspiritArgs {
    const NAME: &'static str = "espirit";
    const ALIASES: &'static [&'static str] = &["ecalib-maps"];
    const INPUTS: Inputs = KSPACE;
}

impl Operation for EspiritArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: ComplexElement + Kind>(args: &EspiritArgs, x: &XData<T>) -> Result<Planned> {
            let k = args.kspace.kdata(x)?;
            let maps = XData::<T>::zeros(x.app(), &EspiritMaps::<T>::output_shape(&k)?)?;
            Ok((Box::new(EspiritMaps::new(&k, &maps, args.settings.params())), T::wrap(maps)))
        }
        on_kspace(Self::NAME, inputs, |k| typed(self, k), |k| typed(self, k))
    }
    kspace_rules!();
}

fn five() -> usize {
    5
}

/// Coil sensitivity maps by Walsh's method on the images of k-space's fully sampled centre (as ismrmrd-python-tools'
/// calculate_csm_walsh).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'walsh-maps'\nsmoothing = 7")?;
/// assert_eq!(step.name(), "walsh-maps");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper walsh-maps data/kspace.mat:kspace out/maps.npy")]
#[serde(deny_unknown_fields)]
pub struct WalshMapsArgs {
    /// The k-space's layout.
    #[command(flatten)]
    #[serde(flatten)]
    pub kspace: KSpaceArgs,
    /// The side of the box the coil covariance is averaged over.
    #[arg(long, default_value_t = 5)]
    #[serde(default = "five")]
    pub smoothing: usize,
}

impl Named for WalshMapsArgs {
    const NAME: &'static str = "walsh-maps";
    const INPUTS: Inputs = KSPACE;
}

impl Operation for WalshMapsArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        fn typed<T: ComplexElement + Kind>(args: &WalshMapsArgs, x: &XData<T>) -> Result<Planned> {
            let k = args.kspace.kdata(x)?;
            let maps = XData::<T>::zeros(x.app(), &WalshMaps::<T>::output_shape(x.shape())?)?;
            let params = WalshParams::default().smoothing(args.smoothing);
            Ok((Box::new(WalshMaps::from_kspace(&k, &maps, params)), T::wrap(maps)))
        }
        on_kspace(Self::NAME, inputs, |k| typed(self, k), |k| typed(self, k))
    }
    kspace_rules!();
}
