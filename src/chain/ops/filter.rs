//! Convolutions and gradients (the filter family): `convolve` with a named filter or a filter file, the gradient
//! magnitude, and scipy.ndimage's filters spelled as convolutions (`gaussian-filter`, `uniform-filter`,
//! `derivative`). Sigmas may be given in millimetres for inputs with a voxel size.

use super::operation::{Named, Operation, Planned, Shortcut, refuse_colour_rank, spanned, spatial_span};
use super::params::{BorderArgs, by_name, maybe_by_name, named};
use super::reach::Reach;
use super::reach::{file_shape, no_wrap};
use crate::Result;
use crate::chain::any_data::{AnyData, FileSpec, Kind, dispatch};
use crate::prelude::*;
use num_complex::Complex64;
use serde::Deserialize;

/// Convolve with a named filter or a filter file (scipy.ndimage semantics).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'convolve'\nkernel = 'gaussian:2'")?;
/// assert_eq!(step.name(), "convolve");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper convolve data/phantom_256.png out/blur.tif --kernel gaussian:2\n  cliper convolve 'scans/*.png' out/ --kernel sobel-x --border nearest --scale minmax\n\nNamed filters (scipy.ndimage's functions of the same name, over the last --rank axes): gaussian:SIGMA \
    (gaussian_filter), box:SIZE (uniform_filter), log:SIGMA (gaussian_laplace), laplacian (laplace), sobel-x|y|z \
    (sobel, axis -1|-2|-3), prewitt-x|y|z (prewitt)."
)]
pub struct ConvolveArgs {
    /// A named filter (`gaussian:2`, `sobel-x`, …) or a filter file (.npy, .tif, FILE.mat:VAR …).
    #[arg(long, short)]
    pub kernel: String,
    /// For filter files: conv (scipy.ndimage.convolve, the default) or corr (correlate). Named filters are
    /// scipy.ndimage's functions of that name and take no mode.
    #[arg(long, value_parser = named::<ConvMode>(&["conv", "corr"]))]
    #[serde(default, deserialize_with = "maybe_by_name")]
    pub mode: Option<ConvMode>,
    /// The border and its constant.
    #[command(flatten)]
    #[serde(flatten)]
    pub border: BorderArgs,
    /// Output extent: same, valid or full.
    #[arg(long, value_name = "EXTENT", value_parser = named::<ConvOutput>(&["same", "valid", "full"]), default_value = "same")]
    #[serde(default, deserialize_with = "by_name")]
    pub output: ConvOutput,
    /// Axes a named filter spans, the last ones of the data: 1 to 3 (default every axis, as scipy: a colour
    /// image's two per channel, a 4-D NIfTI's three; 2 filters a volume slice by slice).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
}

impl ConvolveArgs {
    /// The step of scipy.ndimage's filter `kernel` (`gaussian:2`, `box:5`, `sobel-x`) with a border over some axes.
    fn named(kernel: String, NamedFilterArgs { border, rank }: NamedFilterArgs) -> ConvolveArgs {
        ConvolveArgs { kernel, mode: None, border, output: ConvOutput::Same, rank }
    }

    /// Whether `kernel` names a file (else it names a filter).
    fn is_file(&self) -> bool {
        FileSpec::parse(&self.kernel).path.exists()
    }
}

impl Named for ConvolveArgs {
    const NAME: &'static str = "convolve";
}

impl Operation for ConvolveArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        dispatch!(x, x => self.plan_typed(x))
    }

    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        if self.output != ConvOutput::Same {
            return Err(super::reach::whole(
                Self::NAME,
                shape,
                "with an output other than `same` changes the image's size",
            ));
        }
        no_wrap(Self::NAME, shape, self.border.border())?;
        let extent = if self.is_file() {
            file_shape(&self.kernel)?.into_iter().max().unwrap_or(1)
        } else {
            let rank = spanned(Self::NAME, self.rank, shape)?;
            Filter::<f64>::named(&self.kernel, rank)?.shape().iter().copied().max().unwrap_or(1)
        };
        Reach::halo(extent)
    }

    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        // A filter file's axes are its own.
        (!self.is_file()).then_some(&mut self.rank)
    }

    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        refuse_colour_rank(Self::NAME, self.rank, shape)?;
        Ok(self.clone())
    }

    fn in_voxels(&self, geometry: Option<&Geometry>, shape: &[usize], colour: bool) -> Result<Self> {
        let Some((name, args)) = self.kernel.split_once(':') else { return Ok(self.clone()) };
        if !args.to_ascii_lowercase().contains("mm") || self.is_file() {
            return Ok(self.clone());
        }
        let kernel = sigmas_in_voxels(
            &self.kernel,
            name,
            args,
            geometry,
            spanned(Self::NAME, self.rank, shape)?,
            shape,
            colour,
        )?;
        Ok(ConvolveArgs { kernel, ..self.clone() })
    }

    fn geometry(&self, geometry: &Geometry, input: &[usize], output: &[usize], colour: bool) -> Option<Geometry> {
        if self.output == ConvOutput::Same {
            return Some(*geometry);
        }
        // Correlation with a filter of w weights centres it on weight w/2 (scipy.ndimage's rule); a convolution is
        // a correlation with the weights reversed, centred on (w − 1)/2. A valid output starts at the centre; a
        // full one w − 1 before it.
        let correlation = matches!(self.mode, Some(ConvMode::Correlation)) || (self.mode.is_none() && !self.is_file());
        let valid = self.output == ConvOutput::Valid;
        let offsets: Vec<f64> = input
            .iter()
            .zip(output)
            .map(|(&n, &m)| {
                let w = if valid { n + 1 - m.min(n) } else { m + 1 - n.min(m) };
                let centre = if correlation { w / 2 } else { (w - 1) / 2 } as f64;
                if valid { centre } else { centre - (w - 1) as f64 }
            })
            .collect();
        Some(geometry.shifted(spatial_offsets(&offsets, input.len(), colour)))
    }

    fn files(&self) -> Vec<(&'static str, &str)> {
        if self.is_file() { vec![("kernel file", self.kernel.as_str())] } else { Vec::new() }
    }
}

impl ConvolveArgs {
    fn plan_typed<T: Kind>(&self, x: &XData<T>) -> Result<Planned>
    where
        T::Real: Kind + FilterElement<T>,
    {
        let params = ConvParams::default().border(self.border.border()).output(self.output);
        match (load_filter::<T>(&self.kernel, self.rank, x.shape())?, self.mode) {
            // scipy.ndimage.sobel and its kin correlate with the weights as they lie.
            (KernelWeights::Named(_), Some(_)) => Err(Error::invalid(
                Self::NAME,
                format!(
                    "`{}` is scipy.ndimage's filter of that name and takes no mode; --mode conv|corr is for filter \
                     files",
                    self.kernel
                ),
            )),
            (KernelWeights::Named(f), None) => convolve(x, &f, params.mode(ConvMode::Correlation)),
            (KernelWeights::Real(f), mode) => convolve(x, &f, params.mode(mode.unwrap_or_default())),
            (KernelWeights::Same(f), mode) => convolve(x, &f, params.mode(mode.unwrap_or_default())),
        }
    }
}

/// Geometry offsets (slice, row, column) of per-array-axis `offsets`: a 2-D array's axes are rows and columns.
pub(super) fn spatial_offsets(offsets: &[f64], nd: usize, colour: bool) -> [f64; 3] {
    let spatial = Geometry::spatial_axes(nd, colour);
    let first = 3 - spatial.len().min(3);
    let mut by = [0.0; 3];
    for (g, &axis) in spatial.iter().enumerate() {
        if let (Some(slot), Some(&o)) = (by.get_mut(first + g), offsets.get(axis)) {
            *slot = o;
        }
    }
    by
}

/// `name:args` (sigmas in millimetres, then perhaps `:orders`) with the sigmas in voxels of the `rank` spatial
/// axes the filter spans.
fn sigmas_in_voxels(
    kernel: &str,
    name: &str,
    args: &str,
    geometry: Option<&Geometry>,
    rank: usize,
    shape: &[usize],
    colour: bool,
) -> Result<String> {
    let refuse = |why: String| Error::invalid(format!("filter {kernel}"), why);
    let Some(geometry) = geometry else {
        return Err(refuse(
            "sigmas in millimetres need the input's voxel spacing, which only DICOM and NIfTI inputs carry; give \
             sigma in voxels (`gaussian:2`, or one per axis `gaussian:1,1,2`)"
                .into(),
        ));
    };
    // `gaussian:1.5mm:0,1`: the orders after the sigmas stay as they are.
    let (args, orders) = match args.split_once(':') {
        Some((sigmas, orders)) => (sigmas, Some(orders)),
        None => (args, None),
    };
    let millimetres: Vec<f64> = args
        .split(',')
        .map(|t| {
            let t = t.trim().to_ascii_lowercase();
            t.strip_suffix("mm").unwrap_or(&t).trim().parse::<f64>().map_err(|_| {
                refuse(format!("`{t}` is not a length: give every sigma in millimetres (`1.5mm`) or none"))
            })
        })
        .collect::<Result<_>>()?;
    let millimetres = match millimetres.as_slice() {
        [one] => vec![*one; rank],
        many if many.len() == rank => many.to_vec(),
        many => {
            return Err(refuse(format!(
                "gives {} sigmas for a filter over {rank} axes: give one, or one per axis",
                many.len()
            )));
        }
    };
    // The filter spans the last `rank` axes (a colour image's two image axes); each is a spatial axis whose
    // geometry axis (slice, row, column) gives its spacing.
    let covered = spatial_span(&format!("filter {kernel}"), "filter", rank, shape, colour)?;
    let spacing = geometry.spacing_mm();
    let sigmas: Vec<String> = covered
        .iter()
        .zip(&millimetres)
        .map(|(&(_, g), mm)| format!("{}", mm / spacing.get(g).copied().unwrap_or(1.0)))
        .collect();
    Ok(match orders {
        Some(orders) => format!("{name}:{}:{orders}", sigmas.join(",")),
        None => format!("{name}:{}", sigmas.join(",")),
    })
}

/// A convolution of `x` by `f` into a new output of the shape `params` give.
fn convolve<T: Kind, K: FilterElement<T>>(x: &XData<T>, f: &Filter<K>, params: ConvParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &Convolution::<T, K>::output_shape(x.shape(), f.shape(), &params)?)?;
    Ok((Box::new(Convolution::new(x, f, &y, params)), T::wrap(y)))
}

/// Filter weights for data of type `T`: real weights (named filters, real files) or weights of `T` itself
/// (complex filter files for complex data).
enum KernelWeights<T: Element> {
    /// A named filter's correlation weights.
    Named(Filter<T::Real>),
    Real(Filter<T::Real>),
    Same(Filter<T>),
}

/// A named filter (`gaussian:2`, `sobel-x`, …) or a filter file (`kernel.npy`, `k.mat:W`).
fn load_filter<T: Kind>(spec: &str, rank: Option<usize>, shape: &[usize]) -> Result<KernelWeights<T>> {
    let file = FileSpec::parse(spec);
    if !file.path.exists() {
        return Filter::named(spec, spanned("convolve", rank, shape)?).map(KernelWeights::Named).map_err(|e| match e {
            Error::InvalidArgument { op, reason } => Error::InvalidArgument {
                op,
                reason: format!("{reason}, or a filter file (no file {} exists)", file.path.display()),
            },
            other => other,
        });
    }
    let host = file.read()?.array;
    let shape = host.shape().to_vec();
    // Weights are parameters, rounded to the precision the data computes in (a float64 file — numpy's default —
    // filters f32 data as numpy's f32 arithmetic would); only their kind must fit: complex weights need complex data.
    if matches!(host, HostArray::C32(_) | HostArray::C64(_)) {
        if !T::IS_COMPLEX {
            return Err(Error::TypeRule {
                op: format!("filter {file}"),
                rule: "real weights for real data".into(),
                got: host.dtype().name(),
            });
        }
        let values = host.to_elements::<Complex64>(&file.path)?;
        return Ok(KernelWeights::Same(Filter::new(&shape, values.iter().map(|&v| T::from_c64(v)).collect())?));
    }
    let values = host.to_elements::<f64>(&file.path)?;
    Ok(KernelWeights::Real(Filter::new(&shape, values.iter().map(|&v| T::Real::from_c64(v.into())).collect())?))
}

/// The gradient magnitude (scipy.ndimage.gaussian_gradient_magnitude, or the Sobel/Prewitt/Scharr magnitude).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'gradient-magnitude'")?;
/// assert_eq!(step.name(), "gradient-magnitude");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper gradient-magnitude data/phantom_256.png out/edges.tif --derivative gaussian:2\n  cliper gradient-magnitude ct.nii.gz out/edges.nii.gz --rank 3"
)]
pub struct GradientMagnitudeArgs {
    /// sobel, prewitt, scharr or gaussian:SIGMA (voxels; one per axis as gaussian:1,1,2).
    #[arg(long, default_value = "sobel")]
    #[serde(default = "sobel", deserialize_with = "by_name")]
    pub derivative: Derivative,
    /// The border and its constant.
    #[command(flatten)]
    #[serde(flatten)]
    pub border: BorderArgs,
    /// Axes the gradient spans, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
}

fn sobel() -> Derivative {
    Derivative::Sobel
}

impl Named for GradientMagnitudeArgs {
    const NAME: &'static str = "gradient-magnitude";
    const ALIASES: &'static [&'static str] = &["gaussian-gradient-magnitude"];
}

impl Operation for GradientMagnitudeArgs {
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
        let [x] = inputs else { return Err(Error::invalid(Self::NAME, "takes one input")) };
        let params = GradientParams::default()
            .derivative(self.derivative.clone())
            .border(self.border.border())
            .rank(spanned(Self::NAME, self.rank, x.shape())?);
        super::operation::real_only(
            Self::NAME,
            x,
            "real data (scipy's gradient magnitudes are of real images)",
            |x| gradient_magnitude(x, params.clone()),
            |x| gradient_magnitude(x, params.clone()),
        )
    }

    fn reach(&self, shape: &[usize], _axis: usize) -> Result<Reach> {
        no_wrap(Self::NAME, shape, self.border.border())?;
        let extent = match &self.derivative {
            Derivative::Gaussian(sigmas) => {
                let text: Vec<String> = sigmas.iter().map(f64::to_string).collect();
                let rank = spanned(Self::NAME, self.rank, shape)?.max(sigmas.len());
                let spec = format!("gaussian:{}", text.join(","));
                Filter::<f64>::named(&spec, rank)?.shape().iter().copied().max().unwrap_or(1)
            }
            Derivative::Sobel | Derivative::Prewitt | Derivative::Scharr => 3,
        };
        Reach::halo(extent)
    }

    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        Some(&mut self.rank)
    }

    fn for_colour(&self, shape: &[usize]) -> Result<Self> {
        refuse_colour_rank(Self::NAME, self.rank, shape)?;
        Ok(self.clone())
    }
}

/// The gradient magnitude of real data into a new output.
fn gradient_magnitude<T: Kind + RealElement>(x: &XData<T>, params: GradientParams) -> Result<Planned> {
    let y = XData::<T>::zeros(x.app(), &GradientMagnitude::<T>::output_shape(x.shape())?)?;
    Ok((Box::new(GradientMagnitude::new(x, &y, params)), T::wrap(y)))
}

/// The border and the axes of a scipy.ndimage filter spelled as a convolution.
///
/// ```
/// use cliper::chain::{ConvolveArgs, Op};
/// let Op::Convolve(ConvolveArgs { rank, .. }) = toml::from_str("op = 'gaussian-filter'\nsigma = '2'\nrank = 2")? else { unreachable!() };
/// assert_eq!(rank, Some(2));
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
pub struct NamedFilterArgs {
    /// The border and its constant.
    #[command(flatten)]
    #[serde(flatten)]
    pub border: BorderArgs,
    /// Axes the filter spans, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    #[serde(default)]
    pub rank: Option<usize>,
}

/// scipy.ndimage.gaussian_filter (with derivative orders): `convolve --kernel gaussian:SIGMA[:ORDER]`.
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'gaussian-filter'\nsigma = '2'")?;
/// assert_eq!(step.name(), "convolve");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(
    long_about = None,
    after_help = "Examples:\n  cliper gaussian-filter data/phantom_256.png out/blur.tif --sigma 2\n  cliper gaussian-filter ct.nii.gz out/dz.nii.gz --sigma 1.5mm --order 1,0,0 --rank 3"
)]
pub struct GaussianFilterArgs {
    /// Sigma in voxels (or millimetres for inputs with geometry: 1.5mm); one, or one per axis (1,1,2).
    #[arg(long)]
    pub sigma: String,
    /// Derivative order: one for every axis, or one per axis (0,1 differentiates along the last).
    #[arg(long)]
    #[serde(default)]
    pub order: Option<String>,
    /// The border and the axes spanned.
    #[command(flatten)]
    #[serde(flatten)]
    pub filter: NamedFilterArgs,
}

impl Named for GaussianFilterArgs {
    const NAME: &'static str = "gaussian-filter";
}

impl Shortcut for GaussianFilterArgs {
    type Target = ConvolveArgs;
    fn lower(self) -> Result<ConvolveArgs> {
        let kernel = match &self.order {
            Some(order) => format!("gaussian:{}:{order}", self.sigma),
            None => format!("gaussian:{}", self.sigma),
        };
        Ok(ConvolveArgs::named(kernel, self.filter))
    }
}

/// scipy.ndimage.uniform_filter: the mean over a SIZE window (`convolve --kernel box:SIZE`).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'uniform-filter'\nsize = 5")?;
/// assert_eq!(step.name(), "convolve");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper uniform-filter data/phantom_256.png out/mean5.tif --size 5")]
pub struct UniformFilterArgs {
    /// The window's size along every axis.
    #[arg(long)]
    pub size: usize,
    /// The border and the axes spanned.
    #[command(flatten)]
    #[serde(flatten)]
    pub filter: NamedFilterArgs,
}

impl Named for UniformFilterArgs {
    const NAME: &'static str = "uniform-filter";
}

impl Shortcut for UniformFilterArgs {
    type Target = ConvolveArgs;
    fn lower(self) -> Result<ConvolveArgs> {
        Ok(ConvolveArgs::named(format!("box:{}", self.size), self.filter))
    }
}

/// scipy.ndimage.sobel, prewitt or Scharr's weights along one axis (`convolve --kernel sobel-x` …).
///
/// ```
/// let step: cliper::chain::Op = toml::from_str("op = 'derivative'")?;
/// assert_eq!(step.name(), "convolve");
/// # Ok::<(), toml::de::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Deserialize, clap::Args)]
#[command(long_about = None, after_help = "Example: cliper derivative data/phantom_256.png out/dx.tif --filter sobel --axis -1")]
pub struct DerivativeArgs {
    /// sobel, prewitt or scharr.
    #[arg(long = "filter", id = "filter", value_name = "FILTER", default_value = "sobel")]
    #[serde(rename = "filter", default = "sobel_name")]
    pub derivative: String,
    /// The axis differentiated: -1 (x, the last), -2 (y) or -3 (z, of a volume).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    #[serde(default = "last")]
    pub axis: isize,
    /// The border and the axes spanned.
    #[command(flatten)]
    #[serde(flatten)]
    pub filter: NamedFilterArgs,
}

fn sobel_name() -> String {
    "sobel".into()
}
fn last() -> isize {
    -1
}

impl Named for DerivativeArgs {
    const NAME: &'static str = "derivative";
}

impl Shortcut for DerivativeArgs {
    type Target = ConvolveArgs;
    fn lower(self) -> Result<ConvolveArgs> {
        let letter = match self.axis {
            -1 => "x",
            -2 => "y",
            -3 => "z",
            other => {
                return Err(Error::invalid(Self::NAME, format!("--axis {other}: give -1 (x), -2 (y) or -3 (z)")));
            }
        };
        Ok(ConvolveArgs::named(format!("{}-{letter}", self.derivative), self.filter))
    }
}
