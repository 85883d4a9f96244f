//! `cliper recon`: k-space (MAT or BART CFL, with sensitivity maps and mask when the file has them) to an image
//! through SimpleMRIRecon (SENSE-style coil combination) or RSoSRecon.

use crate::args::{self, OutputArgs};
use crate::chain::Context;
use crate::failure::CliError;
use clap::{Args, ValueEnum};
use cliper::chain::{AnyData, EspiritSettings, Origin, Precision, RunFiles};
use cliper::prelude::*;
use cliper::{BartScaling, Result, ScalarMultiply, read_mat};
use num_complex::{Complex32, Complex64};
use serde_json::json;
use std::path::{Path, PathBuf};

/// How the coil images are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Σ image_c · conj(map_c) (needs sensitivity maps): a complex image.
    Sense,
    /// √Σ |image_c|²: a magnitude image, no maps needed.
    Rsos,
    /// Iterative SENSE for undersampled k-space: conjugate gradients on (AᴴA + λI) x = Aᴴy (needs maps; the
    /// mask is the file's, else the samples that are not zero), as `bart pics -l2 -r λ -i N` (λ 0 without
    /// --lambda: plain CG-SENSE, as pics without -r).
    CgSense,
    /// Compressed sensing: FISTA on ½|Ax − y|² + λ|Wx|₁ with Daubechies-2 wavelets W, as `bart pics -l1 -r λ -i N`
    /// (cycle spinning as BART's unless --no-cycle-spinning, which is `pics -n`); needs --lambda.
    L1Wavelet,
    /// Compressed sensing: ADMM on ½|Ax − y|² + λ·TV(x) (isotropic), as `bart pics -R T:7:0:λ -i N` (N counts
    /// inner CG iterations, as BART's -i does for ADMM); needs --lambda.
    Tv,
}

/// Which part of the complex SENSE image is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Part {
    Complex,
    Abs,
    Real,
    Imag,
    Arg,
}

#[derive(Args)]
pub struct ReconArgs {
    /// k-space file: MAT (`kspace`, `sensitivity_maps`, `mask`) or BART CFL (`NAME_sens`, `NAME_mask` beside it).
    pub(crate) kdata: String,
    /// The image file to write.
    pub(crate) output: String,
    /// sense (default when the file has sensitivity maps) or rsos.
    #[arg(long, value_enum)]
    pub(crate) method: Option<Method>,
    /// k-space is in numpy's FFT order (zero frequency first) rather than centred.
    #[arg(long)]
    pub(crate) uncentered: bool,
    /// Multiply by the file's sampling mask first (a zero-filled reconstruction of the undersampled data).
    #[arg(long)]
    pub(crate) apply_mask: bool,
    /// Sensitivity maps from their own file (BART CFL as `bart ecalib` writes, or an array file holding [coils,
    /// spatial…]), or `espirit` (as `bart ecalib -m1`) or `walsh` (Walsh's method on the images of the fully
    /// sampled centre) to estimate them from the k-space first.
    #[arg(long, value_name = "FILE|espirit|walsh")]
    pub(crate) maps: Option<String>,
    /// Non-Cartesian k-space: the trajectory [3, samples, spokes] in cycles per FOV, as `bart traj` writes it; the
    /// k-space is then BART's [1, samples, spokes, coils] and `--maps FILE` gives the image grid ([x, y, z, coils])
    /// — cg-sense, l1-wavelet or tv with the NUFFT and its Toeplitz normal operator, as `bart pics -t TRAJ`. Frames
    /// along one dimension past the coils (TIME, as `bart traj -t` writes) are one problem, with a trajectory per
    /// frame or one for all.
    #[arg(long, value_name = "TRAJ")]
    pub(crate) traj: Option<String>,
    /// --traj: the NUFFT's kernel — es (FINUFFT's, accurate to 1e-6; the default) or bart (BART 0.8's own
    /// gridding, to reproduce `bart pics -t` to ~1e-4, its ~1e-2 gridding error included).
    #[arg(long, value_parser = cliper::chain::named::<cliper::chain::KernelName>(cliper::chain::KernelName::NAMES))]
    pub(crate) kernel: Option<cliper::chain::KernelName>,
    #[command(flatten)]
    pub(crate) espirit: EspiritSettings,
    /// The weight λ of the penalty, on the scaled data (BART's -r): cg-sense's Tikhonov weight (0 without it),
    /// l1-wavelet's and tv's (required).
    #[arg(long)]
    pub(crate) lambda: Option<f64>,
    /// cg-sense, l1-wavelet, tv: divide the k-space by S first (BART's `pics -w S`; 1 leaves the data as read).
    /// Without it, S is estimated from the fully sampled centre as `bart pics` does by default.
    #[arg(long, value_name = "S")]
    pub(crate) scaling: Option<f64>,
    /// cg-sense, l1-wavelet, tv: multiply the image by the scaling afterwards (BART's `pics -S`), back to the
    /// data's intensities.
    #[arg(long)]
    pub(crate) rescale: bool,
    /// cg-sense, l1-wavelet: the iterations; tv: the inner CG iterations in all (BART's -i).
    #[arg(long, default_value_t = 30)]
    pub(crate) iters: usize,
    /// l1-wavelet: FISTA's step τ (BART's `pics -s`). Without it: 0.95, and with --traj 0.95 over AᴴA's largest
    /// eigenvalue (30 power steps, BART's `pics -e`: the default step diverges on non-Cartesian data).
    #[arg(long)]
    pub(crate) step: Option<f64>,
    /// l1-wavelet: no random shifts around the wavelet transform (BART's `pics -n`).
    #[arg(long)]
    pub(crate) no_cycle_spinning: bool,
    /// What to write of the complex SENSE image (default: complex for NPY/MAT/CFL, abs for PNG/TIFF/RAW).
    #[arg(long, value_enum)]
    pub(crate) part: Option<Part>,
    /// The MAT file holds MATLAB's order, `[x, y, (z,) coil, frames…]`, rather than cliper's `[frames…, coil,
    /// spatial…]` (CFL files are always BART's order).
    #[arg(long)]
    pub(crate) spatial_first: bool,
    /// auto: double (c64 arithmetic) when the file holds complex128 or float64 data, else single; single: c32,
    /// double-precision files rounded; double: c64.
    #[arg(long, value_parser = args::precision(), default_value = "auto")]
    pub(crate) precision: Precision,
    #[command(flatten)]
    pub(crate) options: OutputArgs,
}

/// Runs `cliper recon` on Cartesian k-space (main.rs sends `--traj` to recon_noncartesian).
pub fn run(ctx: &mut Context, args: &ReconArgs) -> std::result::Result<(), CliError> {
    if let Some(kernel) = args.kernel {
        let name = if kernel == cliper::chain::KernelName::Bart { "bart" } else { "es" };
        return Err(
            Error::invalid("cliper recon", format!("--kernel {name} is the NUFFT's: it goes with --traj")).into()
        );
    }
    let output = bart_named(&args.output);
    let mut files = kspace_files(&args.kdata).write("the image", Path::new(&output));
    if let Some(maps) = args.maps.as_deref().filter(|m| !["espirit", "walsh"].contains(m)) {
        files = files.read("the maps", Path::new(maps));
    }
    files.check()?;
    let app = ctx.app()?;
    let path = Path::new(&args.kdata);
    // A MAT file is read once: its complex types choose the precision, then its variables are the k-space.
    let mat =
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("mat")) { Some(read_mat(path)?) } else { None };
    let double = match args.precision {
        Precision::Double => true,
        Precision::Single => false,
        // complex128 k-space or maps (scipy.io.savemat's default); a CFL pair holds complex64; a real mask or the
        // spatial_dims scalar say nothing about the data's precision.
        Precision::Auto => mat.iter().flatten().any(|(_, a)| a.dtype() == Dtype::C64),
    };
    if double { recon::<Complex64>(ctx, &app, args, mat) } else { recon::<Complex32>(ctx, &app, args, mat) }
        .map_err(CliError::from)
}

/// Builds the k-space: a MAT file's variables (read by `run`) in the order `--spatial-first` says, rounded to `T`
/// under `--precision single`, an HDF5 raw-data file (ISMRMRD, fastMRI; with what it adds), or the CFL pair; and
/// warns when the coil axis looks like a spatial one (a MATLAB-ordered file read in cliper's order).
fn load<T: ComplexElement>(
    app: &cliper::ClApp,
    args: &ReconArgs,
    mat: Option<Vec<(String, HostArray)>>,
) -> Result<(KData<T>, Option<crate::recon_h5::H5Extras>)> {
    let path = Path::new(&args.kdata);
    if crate::recon_h5::is_h5(path) {
        let (k, extras) = crate::recon_h5::load::<T>(app, path)?;
        return Ok((k, Some(extras)));
    }
    let k = match mat {
        Some(variables) => {
            let names = KSpaceMat {
                spatial_first: args.spatial_first,
                round: args.precision == Precision::Single,
                ..KSpaceMat::default()
            };
            KData::<T>::from_mat_variables(app, variables, path, &names)?
        }
        None if args.spatial_first => {
            return Err(Error::invalid(
                "cliper recon",
                format!("--spatial-first is for MAT files; {} is in BART's order", args.kdata),
            ));
        }
        None => KData::<T>::load(app, path)?,
    };
    let (coils, spatial) = (k.num_coils(), k.spatial_shape());
    if !args.spatial_first && coils > 64 && spatial.iter().any(|&n| n <= 64) {
        eprintln!(
            "warning: {} read as {coils} coils of {spatial:?} images; if the file is in MATLAB's order [x, y, coil], \
             pass --spatial-first",
            args.kdata
        );
    }
    Ok((k, None))
}

fn recon<T: ComplexElement>(
    ctx: &Context,
    app: &cliper::ClApp,
    args: &ReconArgs,
    mat: Option<Vec<(String, HostArray)>>,
) -> Result<()>
where
    AnyData: From<XData<T>> + From<XData<T::Real>>,
{
    let output = bart_named(&args.output);
    let (k, h5) = load::<T>(app, args, mat)?;
    let k = with_maps(app, args, k)?;
    let method = args.method.unwrap_or(if k.sensitivity_maps().is_some() { Method::Sense } else { Method::Rsos });
    let iterative = matches!(method, Method::CgSense | Method::L1Wavelet | Method::Tv);
    check_method(args, method, k.sensitivity_maps().is_some())?;
    let lambda = penalty_weight(method, args.lambda)?;
    let (k, scaling) = if iterative { scaled(&k, args.scaling)? } else { (k, None) };
    let mut pipeline = Pipeline::new(app);
    let k = if args.apply_mask { masked(app, args, &k, &mut pipeline)? } else { k };
    // Both reconstructions write [frames…, spatial…].
    let image_shape = SimpleMRIRecon::output_shape(&k)?;
    let path = Path::new(&output);
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let holds_complex = matches!(ext.as_str(), "npy" | "mat" | "cfl" | "hdr");
    let mut cg = None;
    let result: AnyData = match method {
        Method::Sense | Method::CgSense | Method::L1Wavelet | Method::Tv => {
            let image = XData::<T>::zeros(app, &image_shape)?;
            // The solvers run in the pipeline, so that --profile times their kernels too.
            if method == Method::CgSense {
                cg = Some(pipeline.push_shared(CgSense::new(&k, &image, CgParams::new(args.iters).lambda(lambda))));
            } else if method == Method::Tv {
                pipeline.push(Box::new(TvSense::new(&k, &image, TvParams::new(lambda, args.iters))));
            } else if method == Method::L1Wavelet {
                let params = L1WaveletParams::new(lambda, args.iters).cycle_spinning(!args.no_cycle_spinning);
                let params = args.step.map_or(params, |s| params.step(s));
                pipeline.push(Box::new(L1WaveletSense::new(&k, &image, params)));
            } else {
                pipeline.push(Box::new(SimpleMRIRecon::new(
                    &k,
                    &image,
                    ReconParams::default().centered(!args.uncentered),
                )));
            }
            if let Some(s) = scaling.as_ref().filter(|_| args.rescale) {
                // BART's -S: back to the data's intensities, before any part is taken.
                pipeline.push(Box::new(ScalarMultiply::new(&image, &image, T::from_c64(Complex64::new(s.scale, 0.0)))));
            }
            let part = args.part.unwrap_or(if holds_complex { Part::Complex } else { Part::Abs });
            let real = |p: ComplexPart, pipeline: &mut Pipeline| -> Result<AnyData> {
                let out = XData::<T::Real>::zeros(app, &image_shape)?;
                pipeline.push(Box::new(Complex2Real::new(&image, &out, p)));
                Ok(out.into())
            };
            match part {
                Part::Complex => image.clone().into(),
                Part::Abs => real(ComplexPart::Abs, &mut pipeline)?,
                Part::Real => real(ComplexPart::Real, &mut pipeline)?,
                Part::Imag => real(ComplexPart::Imag, &mut pipeline)?,
                Part::Arg => real(ComplexPart::Arg, &mut pipeline)?,
            }
        }
        Method::Rsos => {
            let image = XData::<T::Real>::zeros(app, &image_shape)?;
            pipeline.push(Box::new(RSoSRecon::new(&k, &image, ReconParams::default().centered(!args.uncentered))));
            image.into()
        }
    };
    let report =
        if ctx.profile && app.profiling() { Some(pipeline.profile()?) } else { pipeline.run().map(|_| None)? };
    let residual = match cg {
        Some(cg) => {
            cg.lock().map_err(|_| Error::invalid("cg-sense", "the solver failed"))?.residuals()?.last().copied()
        }
        None => None,
    };
    let (result, to_reference) = match &h5 {
        Some(h5) => {
            let cut = crate::recon_h5::crop(result, &h5.keep)?;
            let e = crate::recon_h5::against_reference(&cut, &h5.raw)?;
            (cut, e)
        }
        None => (result, None),
    };
    // KData keeps no frame's BART dimension: frames go to TIME (10) on, as pics writes them.
    let frames_at = (k.num_frames() > 1).then_some(10);
    let written = save_image(&result, path, k.spatial_shape().len(), frames_at, args)?;
    if let (Some(h5), Some(e)) = (&h5, to_reference) {
        say!(
            "recon: {:?} cut to the header's recon matrix; the file's own reconstruction is {e:.3e} from it (NRMSE)",
            h5.raw.recon_shape()
        );
    } else if let Some(h5) = &h5 {
        say!("recon: {:?} cut to the header's recon matrix", h5.raw.recon_shape());
    }
    let run =
        Finished { k: &k, method, lambda, iterative, scaling: scaling.as_ref(), residual, written: written.name() };
    say_what_was_done(ctx, app, args, &run, &result, report.as_ref())
}

/// Writes a reconstruction `[frames…, spatial…]` (`spatial` spatial axes) to `path`: with frames, a CFL file holds
/// them in BART's layout from BART dimension `frames_at` on (`images_to_bart_layout`); anything else is written as
/// it is.
pub(crate) fn save_image(
    image: &AnyData,
    path: &Path,
    spatial: usize,
    frames_at: Option<usize>,
    args: &ReconArgs,
) -> Result<Dtype> {
    cliper::chain::create_parent(path)?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    match frames_at {
        Some(dim) if matches!(ext.as_str(), "cfl" | "hdr") => {
            let host = cliper::images_to_bart_layout(&image.to_host()?, spatial, dim)?;
            cliper::chain::save_converted(path, host, Origin::default(), &args.options.options())
        }
        _ => image.save(path, Origin::default(), &args.options.options()),
    }
}

/// `k` with the sensitivity maps `--maps` asks for: estimated (ESPIRiT, Walsh), read from a file, or the file's own.
fn with_maps<T: ComplexElement>(app: &cliper::ClApp, args: &ReconArgs, k: KData<T>) -> Result<KData<T>> {
    Ok(match args.maps.as_deref() {
        Some("espirit") => {
            let maps = EspiritMaps::apply(&undersampled(&k)?, args.espirit.params())?;
            k.with_sensitivity_maps(maps)?
        }
        Some("walsh") => {
            let u = undersampled(&k)?;
            let maps = XData::<T>::zeros(app, &WalshMaps::<T>::output_shape(u.as_xdata().shape())?)?;
            WalshMaps::from_kspace(&u, &maps, WalshParams::default()).run()?;
            k.with_sensitivity_maps(maps)?
        }
        Some(maps) => k.with_maps_file(maps)?,
        None => k,
    })
}

/// Refuses options that do not go with `method` (maps it needs, flags of the iterative methods only).
fn check_method(args: &ReconArgs, method: Method, has_maps: bool) -> Result<()> {
    if method != Method::Rsos && !has_maps {
        return Err(Error::invalid(
            "cliper recon",
            format!(
                "{} has no sensitivity maps; pass --maps FILE or --method rsos, or add maps to the file",
                args.kdata
            ),
        ));
    }
    let iterative = matches!(method, Method::CgSense | Method::L1Wavelet | Method::Tv);
    if iterative && (args.apply_mask || args.uncentered) {
        return Err(Error::invalid(
            "cliper recon",
            "cg-sense, l1-wavelet and tv use the file's mask (or the samples that are not zero) and centred k-space; \
             leave out --apply-mask and --uncentered",
        ));
    }
    if !iterative && (args.scaling.is_some() || args.rescale || args.lambda.is_some()) {
        return Err(Error::invalid(
            "cliper recon",
            format!(
                "--lambda, --scaling and --rescale are for cg-sense, l1-wavelet and tv, not --method {}",
                method_name(method)
            ),
        ));
    }
    check_step(args, method)
}

/// `--step` belongs to l1-wavelet and must be positive.
pub(crate) fn check_step(args: &ReconArgs, method: Method) -> Result<()> {
    match args.step {
        Some(_) if method != Method::L1Wavelet => Err(Error::invalid(
            "cliper recon",
            format!("--step is FISTA's (l1-wavelet), not --method {}'s", method_name(method)),
        )),
        Some(s) if !(s.is_finite() && s > 0.0) => {
            Err(Error::invalid("cliper recon", format!("--step {s}: the step must be positive")))
        }
        _ => Ok(()),
    }
}

/// `k` multiplied by its sampling mask on the device (`--apply-mask`), its maps kept.
fn masked<T: ComplexElement>(
    app: &cliper::ClApp,
    args: &ReconArgs,
    k: &KData<T>,
    pipeline: &mut Pipeline,
) -> Result<KData<T>> {
    let mask = k.sampling_mask().ok_or_else(|| {
        Error::invalid("cliper recon", format!("{} has no sampling mask for --apply-mask", args.kdata))
    })?;
    let masked = XData::zeros(app, k.as_xdata().shape())?;
    pipeline.push(Box::new(ApplyMask::new(k.as_xdata(), mask, &masked)));
    let mut m = KData::new(masked, k.spatial_shape().len())?;
    if let Some(maps) = k.sensitivity_maps() {
        m = m.with_sensitivity_maps(maps.clone())?;
    }
    Ok(m)
}

/// What a reconstruction did, for its report.
struct Finished<'a, T: ComplexElement> {
    k: &'a KData<T>,
    method: Method,
    lambda: f64,
    iterative: bool,
    scaling: Option<&'a Scaling>,
    residual: Option<f64>,
    written: &'static str,
}

/// Prints what was done: the JSON document every operation prints (`--json`), or lines.
fn say_what_was_done<T: ComplexElement>(
    ctx: &Context,
    app: &cliper::ClApp,
    args: &ReconArgs,
    run: &Finished<'_, T>,
    result: &AnyData,
    report: Option<&cliper::Report>,
) -> Result<()> {
    let Finished { k, method, lambda, iterative, scaling, residual, written } = *run;
    let output = bart_named(&args.output);
    let method_name = method_name(method);
    if ctx.json {
        // The layout every operation prints (docs/cli.md), with what the reconstruction read.
        let doc = json!({
            "device": app.device().name,
            "runs": [{
                "input": args.kdata, "error": null, "values": [], "transfers_during_chain": 0,
                "written": [{ "name": "image", "path": output, "shape": result.shape(), "type": written }],
            }],
            "recon": {
                "method": method_name, "coils": k.num_coils(), "frames": k.frame_shape(), "spatial": k.spatial_shape(),
                "masked": args.apply_mask,
                "iterations": iterative.then_some(args.iters),
                "lambda": iterative.then_some(lambda),
                "scaling": scaling.as_ref().map(|s| s.scale),
                "scaling_estimated": scaling.as_ref().map(|s| s.estimated.is_some()),
                "rescaled": args.rescale,
                "relative_residual": residual,
            },
            "profile": report.map(crate::output::report_json),
        });
        say!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        say!(
            "recon ({method_name}{}): {} coils, wrote image {:?} {} to {}",
            if args.apply_mask { ", masked" } else { "" },
            k.num_coils(),
            result.shape(),
            written,
            output
        );
        if let Some(s) = scaling {
            say!("{s}");
        }
        if method == Method::L1Wavelet {
            say!("l1-wavelet: λ {lambda}, {} FISTA iterations", args.iters);
        }
        if method == Method::Tv {
            say!("tv: λ {lambda}, ADMM until {} CG iterations", args.iters);
        }
        if let Some(r) = residual {
            say!("cg-sense: λ {lambda}, {} iterations, relative residual |r|/|r₀| {r:.3e}", args.iters);
        }
        if let Some(r) = report {
            say!("{r}");
        }
    }
    Ok(())
}

/// The method's name on the command line.
pub(crate) fn method_name(method: Method) -> &'static str {
    match method {
        Method::Sense => "sense",
        Method::Rsos => "rsos",
        Method::CgSense => "cg-sense",
        Method::L1Wavelet => "l1-wavelet",
        Method::Tv => "tv",
    }
}

/// λ for `method`: as given; cg-sense without one is plain CG-SENSE (λ 0, as `bart pics` without -r), while
/// l1-wavelet and tv without one would silently run unregularised, so they ask for it.
pub(crate) fn penalty_weight(method: Method, lambda: Option<f64>) -> Result<f64> {
    match (method, lambda) {
        (Method::L1Wavelet | Method::Tv, None) => Err(Error::invalid(
            "cliper recon",
            format!(
                "--method {} needs --lambda, the penalty's weight on the scaled data (as bart pics -r; e.g. 0.005)",
                method_name(method)
            ),
        )),
        (_, Some(l)) if !(l.is_finite() && l >= 0.0) => {
            Err(Error::invalid("cliper recon", format!("--lambda {l}: the weight must be 0 or more")))
        }
        (_, lambda) => Ok(lambda.unwrap_or(0.0)),
    }
}

/// The data scaling of an iterative reconstruction and `k` divided by it: `--scaling S` as given (BART's -w S;
/// 1 leaves `k` as it is), else BART's estimate ([`BartScaling`]).
fn scaled<T: ComplexElement>(k: &KData<T>, given: Option<f64>) -> Result<(KData<T>, Option<Scaling>)> {
    let scaling = match given {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(Error::invalid("cliper recon", format!("--scaling {s}: the scaling must be positive")));
        }
        Some(scale) => Scaling { scale, estimated: None },
        None => {
            let estimate = BartScaling::estimate(k)?;
            Scaling { scale: estimate.scale, estimated: Some(estimate) }
        }
    };
    let k = if scaling.scale == 1.0 { k.clone() } else { BartScaling::divide(k, scaling.scale)? };
    Ok((k, Some(scaling)))
}

/// The scaling a reconstruction divided the k-space by, and BART's estimate when it was estimated.
struct Scaling {
    scale: f64,
    estimated: Option<BartScaling>,
}

impl std::fmt::Display for Scaling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.estimated {
            Some(e) => write!(
                f,
                "scaling: k-space divided by {:.6}, estimated as bart pics does (calibration block {:?} at {:?}; \
                 max {:.6}, p90 {:.6}, median {:.6}: the {} chosen)",
                self.scale,
                e.calibration_shape,
                e.calibration_position,
                e.max,
                e.p90,
                e.median,
                if e.chose_max() { "max" } else { "p90" }
            ),
            None => write!(f, "scaling: k-space divided by {} (--scaling)", self.scale),
        }
    }
}

/// The k-space a scan delivered: the samples outside its attached mask set to 0 (the k-space itself when no mask is
/// attached). ESPIRiT finds the fully sampled centre from the samples that are not zero.
fn undersampled<T: ComplexElement>(k: &KData<T>) -> Result<KData<T>> {
    let Some(mask) = k.sampling_mask() else { return Ok(k.clone()) };
    let masked = ApplyMask::apply(k.as_xdata(), mask)?;
    KData::new(masked, k.spatial_shape().len())
}

#[derive(Args)]
pub struct EcalibArgs {
    /// k-space file: BART CFL (the mask `NAME_mask` beside it is applied first) or MAT (`kspace`, `mask`).
    kdata: String,
    /// The maps file: `.cfl` in BART's layout (as `bart ecalib` writes), or an array file holding [coils, x, y].
    output: String,
    /// espirit (`bart ecalib -m1`) or walsh (Walsh's method on the images of the fully sampled centre, as
    /// ismrmrd-python-tools' calculate_csm_walsh).
    #[arg(long, value_enum, default_value = "espirit")]
    method: MapsMethod,
    #[command(flatten)]
    espirit: EspiritSettings,
    /// espirit: sets of maps (`bart ecalib -m`): the eigenvectors of the largest eigenvalues, each cropped by its
    /// own; 2 where the object is larger than the field of view. Written as BART's (x, y, 1, coils, maps), or
    /// [maps, coils, x, y].
    #[arg(short = 'm', long = "maps", default_value_t = 1, value_name = "M")]
    sets: usize,
    /// walsh: the side of the box the coil covariance is averaged over.
    #[arg(long, default_value_t = 5)]
    smoothing: usize,
    /// auto: complex128 (c64 arithmetic) when a MAT file holds complex128 data, else complex64; single; double.
    #[arg(long, value_parser = args::precision(), default_value = "auto")]
    precision: Precision,
}

/// How `cliper ecalib` estimates the maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MapsMethod {
    Espirit,
    Walsh,
}

/// Runs `cliper ecalib`.
pub fn ecalib(ctx: &mut Context, args: &EcalibArgs) -> std::result::Result<(), CliError> {
    let output = bart_named(&args.output);
    kspace_files(&args.kdata).write("the maps", Path::new(&output)).check()?;
    let app = ctx.app()?;
    let path = Path::new(&args.kdata);
    let double = match args.precision {
        Precision::Double => true,
        Precision::Single => false,
        // A MAT file's complex128 k-space (scipy.io.savemat's default); a CFL pair holds complex64.
        Precision::Auto => {
            path.extension().is_some_and(|e| e.eq_ignore_ascii_case("mat"))
                && read_mat(path)?.iter().any(|(_, a)| a.dtype() == Dtype::C64)
        }
    };
    if double { maps::<Complex64>(ctx, &app, args, &output) } else { maps::<Complex32>(ctx, &app, args, &output) }
        .map_err(CliError::from)
}

/// The maps of `cliper ecalib` in `T`, estimated on the device (in the profile with `--profile`) and saved.
fn maps<T: ComplexElement>(ctx: &Context, app: &cliper::ClApp, args: &EcalibArgs, output: &str) -> Result<()> {
    let k = undersampled(&KData::<T>::load(app, &args.kdata)?)?;
    let params = args.espirit.params().sets(args.sets);
    let shape = match args.method {
        MapsMethod::Espirit => EspiritMaps::output_shape_with(&k, params)?,
        MapsMethod::Walsh if args.sets != 1 => {
            return Err(Error::invalid("cliper ecalib", "--maps M is ESPIRiT's (bart ecalib -m); walsh gives one set"));
        }
        MapsMethod::Walsh => WalshMaps::<T>::output_shape(k.as_xdata().shape())?,
    };
    let maps = XData::<T>::zeros(app, &shape)?;
    let mut pipeline = Pipeline::new(app);
    let strategy: Box<dyn Fn() -> Option<String>> = match args.method {
        MapsMethod::Espirit => {
            let espirit = pipeline.push_shared(EspiritMaps::new(&k, &maps, params));
            Box::new(move || espirit.lock().ok()?.strategy().map(|s| s.to_string()))
        }
        MapsMethod::Walsh => {
            let params = WalshParams::default().smoothing(args.smoothing);
            let walsh = pipeline.push_shared(WalshMaps::from_kspace(&k, &maps, params));
            Box::new(move || walsh.lock().ok()?.strategy().map(|s| s.to_string()))
        }
    };
    let report =
        if ctx.profile && app.profiling() { Some(pipeline.profile()?) } else { pipeline.run().map(|_| None)? };
    let path = Path::new(output);
    cliper::chain::create_parent(path)?;
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let spatial = k.spatial_shape().to_vec();
    if matches!(ext.as_str(), "cfl" | "hdr") && args.sets > 1 {
        // Several sets [maps, coils, x, y(, z)]: BART's (x, y, z, coils, maps).
        let values = maps.to_ndarray()?;
        let (sets, coils) = (args.sets, k.num_coils());
        let at = |d: usize| spatial.get(d).copied().unwrap_or(1);
        let shape = [at(0), at(1), at(2), coils, sets];
        let bart = cliper::ndarray::ArrayD::from_shape_fn(cliper::ndarray::IxDyn(&shape), |i| {
            let index: Vec<usize> = [i[4], i[3], i[0], i[1], i[2]].into_iter().take(2 + spatial.len()).collect();
            values.get(index.as_slice()).copied().unwrap_or_default()
        });
        cliper::write_cfl(path, &HostArray::from_elements(bart))?;
    } else if matches!(ext.as_str(), "cfl" | "hdr") {
        // Maps [coils, spatial…] laid out as k-space is: BART's (x, y, z, coils).
        KData::new(maps.clone(), spatial.len())?.save_cfl(path)?;
    } else {
        maps.save(path)?;
    }
    say!("ecalib: {}; wrote maps {:?} to {}", strategy().unwrap_or_default(), maps.shape(), output);
    if let Some(r) = report {
        say!("{r}");
    }
    Ok(())
}

/// The files a k-space input is read from: the file, and for a BART CFL the maps and mask beside it
/// (`NAME_sens`, `NAME_mask`).
fn kspace_files(kdata: &str) -> RunFiles {
    let path = Path::new(kdata);
    let files = RunFiles::default().read("the k-space", path);
    if !path.extension().is_some_and(|e| e.eq_ignore_ascii_case("cfl") || e.eq_ignore_ascii_case("hdr")) {
        return files;
    }
    let stem = path.with_extension("");
    let beside = |suffix: &str| PathBuf::from(format!("{}{suffix}.cfl", stem.display()));
    files.read("the k-space's maps", &beside("_sens")).read("the k-space's mask", &beside("_mask"))
}

/// An output named as BART names its files, without an extension (`maps`), is a CFL pair (`maps.cfl`,
/// `maps.hdr`); inputs so named are found by the readers.
pub(crate) fn bart_named(name: &str) -> String {
    match Path::new(name).extension() {
        None if !name.ends_with('/') => format!("{name}.cfl"),
        _ => name.to_string(),
    }
}
