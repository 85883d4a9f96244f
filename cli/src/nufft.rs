//! `cliper nufft`: BART's `bart nufft` on the device — the forward (type 2), adjoint (type 1) and inverse (CG on the
//! normal equations, Toeplitz) non-uniform FFT of BART-layout files and a `bart traj` trajectory.

use crate::args;
use crate::chain::Context;
use crate::failure::CliError;
use clap::Args;
use cliper::chain::{KernelName, NufftStepArgs, Precision, RunFiles};
use cliper::ndarray::ArrayD;
use cliper::prelude::*;
use cliper::{
    CgParams, HostArray, Nufft, NufftParams, NufftPoints, NufftSense, Result, SensePenalty, bart_image_dims,
    images_from_bart, images_to_bart, read_file, samples_from_bart, samples_to_bart, write_file,
};
use num_complex::{Complex32, Complex64};
use std::path::Path;

#[derive(Args)]
pub struct NufftArgs {
    /// The input in BART's layout: an image [x, y, z, …] (forward), or k-space [1, samples, spokes, coils]
    /// (--adjoint, --inverse). CFL (a name without extension is NAME.cfl, as BART names files) or NPY.
    input: String,
    /// The output, in BART's layout: k-space [1, samples, spokes, …] (forward) or images [x, y, z, coils].
    output: String,
    /// The trajectory [3, samples, spokes] in cycles per field of view, as `bart traj` writes it.
    #[arg(long, value_name = "TRAJ")]
    traj: String,
    /// The adjoint, points → image (type 1; `bart nufft -a`).
    #[arg(long, conflicts_with = "inverse")]
    adjoint: bool,
    /// The inverse: conjugate gradients on (AᴴA + λI) x = Aᴴy with A's normal operator by the Toeplitz embedding,
    /// each coil alone (`bart nufft -i`).
    #[arg(long)]
    inverse: bool,
    /// The image dimensions X:Y:Z (or X,Y,Z) for --adjoint and --inverse (`bart nufft -d`); without it, 2⌈max |k|⌉
    /// per axis, as BART estimates them.
    #[arg(long, value_name = "X:Y:Z")]
    dims: Option<String>,
    /// The relative accuracy of the transform (FINUFFT's definition: ℓ2 error over the outputs' norm; default
    /// 1e-6); not with --kernel bart.
    #[arg(long)]
    tolerance: Option<f64>,
    #[arg(long, value_parser = cliper::chain::named::<KernelName>(KernelName::NAMES), default_value = "es")]
    /// es: FINUFFT's "exponential of semicircle" kernel, accurate to --tolerance; bart: BART 0.8's own gridding
    /// (its Kaiser–Bessel table, roll-off and edge-dropping grid), to reproduce `bart nufft` and `pics -t`
    /// outputs, errors included (BART's kernel is about 1e-2 from the exact sums).
    kernel: KernelName,
    /// --inverse: the ℓ2 regularisation λ (`bart nufft -l`).
    #[arg(long, default_value_t = 0.0)]
    lambda: f64,
    /// --inverse: CG iterations (BART's default 50).
    #[arg(long, default_value_t = 50)]
    iters: usize,
    /// auto: complex128 when the input holds complex128 or float64, else complex64; single; double.
    #[arg(long, value_parser = args::precision(), default_value = "auto")]
    precision: Precision,
}

use crate::recon::bart_named;

/// The NUFFT parameters of `--kernel` and `--tolerance`: the nufft steps' own rule (`NufftStepArgs::params`, which
/// refuses a tolerance with BART's kernel).
pub(crate) fn nufft_params(kernel: KernelName, tolerance: Option<f64>) -> Result<NufftParams> {
    NufftStepArgs { tolerance: tolerance.unwrap_or(1e-6), kernel }.params("nufft")
}

/// Runs `cliper nufft`.
pub fn run(ctx: &mut Context, args: &NufftArgs) -> std::result::Result<(), CliError> {
    let (input, output, traj) = (bart_named(&args.input), bart_named(&args.output), bart_named(&args.traj));
    RunFiles::default()
        .read("the input", Path::new(&input))
        .read("the trajectory", Path::new(&traj))
        .write("the output", Path::new(&output))
        .check()?;
    let app = ctx.app()?;
    let data = read_file(&input)?;
    let double = match args.precision {
        Precision::Double => true,
        Precision::Single => false,
        Precision::Auto => matches!(data.dtype(), Dtype::C64 | Dtype::F64),
    };
    let data = data.to_elements::<Complex64>(Path::new(&input))?;
    let trajectory = read_file(&traj)?.to_elements::<Complex64>(Path::new(&traj))?;
    let result = if double {
        transform::<Complex64>(&app, args, &data, &trajectory, &traj)
    } else {
        transform::<Complex32>(&app, args, &data, &trajectory, &traj)
    }?;
    let what = if args.inverse {
        "inverse"
    } else if args.adjoint {
        "adjoint"
    } else {
        "forward"
    };
    let shape = result.shape().to_vec();
    let result = if double {
        HostArray::C64(result)
    } else {
        HostArray::C32(result.mapv(|v| Complex32::new(v.re as f32, v.im as f32)))
    };
    write_file(&output, &result).map_err(CliError::from)?;
    say!("nufft: {what}, {} points, wrote {shape:?} to {output}", trajectory.len() / 3);
    Ok(())
}

/// The image dimensions: --dims, or for a forward transform the input image's first three, or BART's estimate.
fn image_dims(args: &NufftArgs, data: &ArrayD<Complex64>, traj: &ArrayD<Complex64>) -> Result<[usize; 3]> {
    if let Some(text) = &args.dims {
        let parts: Vec<&str> = text.split([':', ',']).collect();
        let parsed: Vec<usize> = parts.iter().filter_map(|p| p.trim().parse().ok()).collect();
        return match parsed[..] {
            [x, y, z] if parts.len() == 3 => Ok([x, y, z]),
            _ => Err(Error::invalid("nufft", format!("--dims {text}: give X:Y:Z, three whole numbers"))),
        };
    }
    if !(args.adjoint || args.inverse) {
        let s = data.shape();
        return Ok([0, 1, 2].map(|d| s.get(d).copied().unwrap_or(1)));
    }
    bart_image_dims(traj, &bart_named(&args.traj))
}

/// The transform `args` asks for, in `T`, laid out as BART lays it out.
fn transform<T: ComplexElement>(
    app: &ClApp,
    args: &NufftArgs,
    data: &ArrayD<Complex64>,
    traj: &ArrayD<Complex64>,
    traj_name: &str,
) -> Result<ArrayD<Complex64>> {
    let dims = image_dims(args, data, traj)?;
    let points = NufftPoints::from_bart(traj, &dims, traj_name)?;
    let params = nufft_params(args.kernel, args.tolerance)?;
    if args.adjoint || args.inverse {
        let (coils, values) = samples_from_bart(data, traj.shape(), &bart_named(&args.input))?;
        let images = if args.adjoint {
            adjoint::<T>(app, &points, coils, &values, params)?
        } else {
            inverse::<T>(app, &points, coils, &values, params, CgParams::new(args.iters).lambda(args.lambda))?
        };
        images_to_bart(&images, coils, &dims)
    } else {
        let (batch, values) = images_from_bart(data, &dims, &bart_named(&args.input))?;
        let samples = forward::<T>(app, &points, batch, &values, params)?;
        samples_to_bart(&samples, batch, traj.shape())
    }
}

fn narrow<T: ComplexElement>(values: &[Complex64]) -> Vec<T> {
    values.iter().map(|&c| T::from_c64(c)).collect()
}

fn widen<T: ComplexElement>(x: &XData<T>) -> Result<Vec<Complex64>> {
    Ok(x.to_vec()?.iter().map(|v| v.to_c64()).collect())
}

fn batch_shape(batch: usize, image: &[usize]) -> Vec<usize> {
    std::iter::once(batch).chain(image.iter().copied()).collect()
}

/// Type 2 of `batch` images (`[batch, image…]` values) to `[batch, points]`.
fn forward<T: ComplexElement>(
    app: &ClApp,
    points: &NufftPoints,
    batch: usize,
    images: &[Complex64],
    params: NufftParams,
) -> Result<Vec<Complex64>> {
    let image = XData::from_slice(app, &batch_shape(batch, points.shape()), &narrow::<T>(images))?;
    let out = XData::zeros(app, &[batch, points.len()])?;
    Nufft::<T>::new(app, points, batch, params)?.forward(&image, &out)?;
    widen(&out)
}

/// Type 1 of `[coils, points]` samples to `[coils, image…]`.
fn adjoint<T: ComplexElement>(
    app: &ClApp,
    points: &NufftPoints,
    coils: usize,
    samples: &[Complex64],
    params: NufftParams,
) -> Result<Vec<Complex64>> {
    let samples = XData::from_slice(app, &[coils, points.len()], &narrow::<T>(samples))?;
    let out = XData::zeros(app, &batch_shape(coils, points.shape()))?;
    Nufft::<T>::new(app, points, coils, params)?.adjoint(&samples, &out)?;
    widen(&out)
}

/// CG on each coil's normal equations (a single coil of sensitivity one), as `bart nufft -i`.
fn inverse<T: ComplexElement>(
    app: &ClApp,
    points: &NufftPoints,
    coils: usize,
    samples: &[Complex64],
    params: NufftParams,
    cg: CgParams,
) -> Result<Vec<Complex64>> {
    let image_len: usize = points.shape().iter().product();
    let ones = XData::from_slice(
        app,
        &batch_shape(1, points.shape()),
        &vec![T::from_c64(Complex64::new(1.0, 0.0)); image_len],
    )?;
    let mut all = Vec::with_capacity(coils * image_len);
    for coil in samples.chunks(points.len().max(1)).take(coils) {
        let coil = XData::from_slice(app, &[1, points.len()], &narrow::<T>(coil))?;
        let out = XData::zeros(app, points.shape())?;
        NufftSense::new(&coil, &ones, points, &out, SensePenalty::L2(cg), params).run()?;
        all.extend(widen(&out)?);
    }
    Ok(all)
}
