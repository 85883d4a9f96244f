//! `cliper recon K OUT --traj TRAJ --maps MAPS`: SENSE reconstructions of non-Cartesian k-space (BART's layouts:
//! k-space [1, samples, spokes, coils], a `bart traj` trajectory, maps [x, y, z, coils]) with BART's data scaling
//! for non-Cartesian data: cg-sense as `bart pics -t TRAJ -l2 -r λ -i N`, l1-wavelet as `pics -t TRAJ -l1 -r λ -e`
//! (or `-s S` with --step S), tv as `pics -t TRAJ -R T:7:0:λ`.

use crate::chain::Context;
use crate::failure::CliError;
use crate::recon::{Method, ReconArgs, bart_named, check_step, method_name, penalty_weight, save_image};
use cliper::chain::{AnyData, Precision, RunFiles};
use cliper::ndarray::ArrayD;
use cliper::prelude::*;
use cliper::{
    BartScaling, CgParams, DcfParams, DensityCompensation, Nufft, NufftParams, NufftPoints, NufftSense, RSoS, Result,
    bart_frame, bart_frame_dim, bart_image_dims, images_from_bart, read_file, samples_from_bart,
};
use num_complex::{Complex32, Complex64};
use std::path::Path;

/// Runs `cliper recon … --traj`.
pub fn run(ctx: &mut Context, args: &ReconArgs) -> std::result::Result<(), CliError> {
    let traj = bart_named(args.traj.as_deref().unwrap_or_default());
    let kspace = bart_named(&args.kdata);
    let output = bart_named(&args.output);
    check(args)?;
    let method = args.method.unwrap_or(Method::CgSense);
    let maps = if method == Method::Rsos { None } else { Some(maps_file(args)?) };
    let mut run_files =
        RunFiles::default().read("the k-space", Path::new(&kspace)).read("the trajectory", Path::new(&traj));
    if let Some(maps) = &maps {
        run_files = run_files.read("the maps", Path::new(maps));
    }
    run_files.write("the image", Path::new(&output)).check()?;
    let app = ctx.app()?;
    let data = read_file(&kspace)?;
    let double = match args.precision {
        Precision::Double => true,
        Precision::Single => false,
        Precision::Auto => matches!(data.dtype(), Dtype::C64 | Dtype::F64),
    };
    let files = Files { kspace: &kspace, traj: &traj, maps: maps.as_deref().unwrap_or_default(), output: &output };
    match (maps.is_some(), double) {
        (false, true) => gridding::<Complex64>(&app, args, &files, data),
        (false, false) => gridding::<Complex32>(&app, args, &files, data),
        (true, true) => reconstruct::<Complex64>(&app, args, &files, data),
        (true, false) => reconstruct::<Complex32>(&app, args, &files, data),
    }
    .map_err(CliError::from)
}

/// The maps file a SENSE reconstruction with a trajectory needs (estimating maps from non-Cartesian data is not
/// built).
fn maps_file(args: &ReconArgs) -> Result<String> {
    match args.maps.as_deref() {
        Some(m) if !["espirit", "walsh"].contains(&m) => Ok(bart_named(m)),
        other => Err(Error::invalid(
            "cliper recon",
            format!(
                "--traj needs --maps FILE (maps [x, y, z, coils] on the image grid, e.g. from bart ecalib on gridded \
                 data) or --method rsos; got {}",
                other.map_or("none".to_string(), |m| format!(
                    "--maps {m}: estimating maps from non-Cartesian data is not built"
                ))
            ),
        )),
    }
}

/// The NUFFT of `--kernel` (es by default) at its default tolerance.
fn nufft_params(args: &ReconArgs) -> Result<NufftParams> {
    crate::nufft::nufft_params(args.kernel.unwrap_or_default(), None)
}

/// Refuses what --traj does not take: sense (a SENSE combination needs Cartesian k-space), what rsos has no use
/// for, Cartesian-only flags.
fn check(args: &ReconArgs) -> Result<()> {
    let method = args.method.unwrap_or(Method::CgSense);
    if method == Method::Sense {
        return Err(Error::invalid(
            "cliper recon",
            "--traj takes --method cg-sense, l1-wavelet, tv (bart pics -t) or rsos (gridding); --method sense is \
             Cartesian only",
        ));
    }
    let penalised = args.lambda.is_some() || args.scaling.is_some() || args.rescale || args.maps.is_some();
    if method == Method::Rsos && penalised {
        return Err(Error::invalid(
            "cliper recon",
            "--method rsos with --traj is gridding: it takes no --maps, --lambda, --scaling or --rescale",
        ));
    }
    check_step(args, method)?;
    if method != Method::Rsos {
        penalty_weight(method, args.lambda)?;
    }
    if args.apply_mask || args.uncentered || args.spatial_first {
        return Err(Error::invalid(
            "cliper recon",
            "--apply-mask, --uncentered and --spatial-first are for Cartesian k-space, not with --traj",
        ));
    }
    Ok(())
}

/// Gridding and RSoS: each coil's adjoint NUFFT of its samples weighted by Pipe–Menon's density compensation (in
/// grid cells: [`DensityCompensation::cell_weights`]) on BART's estimate of the image grid, then the root sum of
/// squares — `bart nufft -a` of the weighted k-space, then `bart rss 8`.
fn gridding<T: ComplexElement>(app: &ClApp, args: &ReconArgs, files: &Files<'_>, data: cliper::HostArray) -> Result<()>
where
    AnyData: From<XData<T::Real>>,
{
    let data = data.to_elements::<Complex64>(Path::new(files.kspace))?;
    let traj = read_file(files.traj)?.to_elements::<Complex64>(Path::new(files.traj))?;
    let dims = bart_image_dims(&traj, files.traj)?;
    let frames = Frames::read(&data, &traj, &dims, files)?;
    let (coils, image_shape) = (frames.coils, frames.points.first().map(|p| p.shape().to_vec()).unwrap_or_default());
    let mut images = Vec::with_capacity(frames.points.len());
    for (points, samples) in frames.points.iter().zip(&frames.samples) {
        let weights = DensityCompensation::pipe_menon(points, DcfParams::default())?.cell_weights();
        let weighted: Vec<T> = samples.iter().zip(weights.iter().cycle()).map(|(v, w)| T::from_c64(v * w)).collect();
        let y = XData::from_slice(app, &[coils, points.len()], &weighted)?;
        let coil_images = XData::<T>::zeros(app, &[&[coils][..], &image_shape].concat())?;
        Nufft::new(app, points, coils, nufft_params(args)?)?.adjoint(&y, &coil_images)?;
        images.extend(RSoS::apply(&coil_images, 0)?.to_vec()?);
    }
    let image = XData::<T::Real>::from_slice(app, &frames.image_shape(&image_shape), &images)?;
    frames.save(AnyData::from(image), image_shape.len(), args, files.output)?;
    say!(
        "recon: gridding with a trajectory ({} points{}, {coils} coils, image {image_shape:?} as bart estimates it), \
         Pipe–Menon density compensation (30 iterations), root sum of squares; wrote {}",
        frames.points.first().map_or(0, NufftPoints::len),
        frames.describe(),
        files.output
    );
    Ok(())
}

/// Non-Cartesian k-space and its trajectory frame by frame (BART's one frame dimension past the coils, as
/// [`bart_frame_dim`] finds it; one frame without): each frame's points and samples `[coils, points]`.
struct Frames {
    frame: Option<(usize, usize)>,
    coils: usize,
    points: Vec<NufftPoints>,
    samples: Vec<Vec<Complex64>>,
}

impl Frames {
    fn read(
        data: &ArrayD<Complex64>,
        traj: &ArrayD<Complex64>,
        dims: &[usize; 3],
        files: &Files<'_>,
    ) -> Result<Frames> {
        let frame = bart_frame_dim(data.shape(), traj.shape(), files.kspace)?;
        let count = frame.map_or(1, |(_, n)| n);
        let (mut coils, mut points, mut samples) = (0, Vec::with_capacity(count), Vec::with_capacity(count));
        for f in 0..count {
            let (traj_f, data_f) = (bart_frame(traj, frame, f), bart_frame(data, frame, f));
            points.push(NufftPoints::from_bart(&traj_f, dims, files.traj)?);
            let (c, values) = samples_from_bart(&data_f, traj_f.shape(), files.kspace)?;
            coils = c;
            samples.push(values);
        }
        Ok(Frames { frame, coils, points, samples })
    }

    /// `[frames, spatial…]`, or `spatial` with one frame.
    fn image_shape(&self, spatial: &[usize]) -> Vec<usize> {
        let lead = self.frame.map(|(_, n)| n);
        lead.into_iter().chain(spatial.iter().copied()).collect()
    }

    /// `[frames, coils, points]`, or `[coils, points]` with one frame.
    fn samples_shape(&self) -> Vec<usize> {
        let per_frame = self.points.first().map_or(0, NufftPoints::len);
        self.frame.map(|(_, n)| n).into_iter().chain([self.coils, per_frame]).collect()
    }

    /// ", N frames along BART dimension D" (nothing with one frame).
    fn describe(&self) -> String {
        self.frame.map(|(d, n)| format!(" per frame, {n} frames along BART dimension {d}")).unwrap_or_default()
    }

    /// Writes `image` (`[frames, spatial…]` with `spatial` spatial axes); frames go back to their BART dimension in
    /// a CFL file.
    fn save(&self, image: AnyData, spatial: usize, args: &ReconArgs, output: &str) -> Result<()> {
        save_image(&image, Path::new(output), spatial, self.frame.map(|(dim, _)| dim), args).map(|_| ())
    }
}

/// The penalty `method` names, with BART's settings: l1-wavelet's step `--step` (pics -s) or 0.95 over AᴴA's
/// largest eigenvalue (pics -e), since pics's default step diverges on non-Cartesian data.
fn penalty(args: &ReconArgs, method: Method, lambda: f64) -> SensePenalty {
    match method {
        Method::L1Wavelet => {
            let params = L1WaveletParams::new(lambda, args.iters).cycle_spinning(!args.no_cycle_spinning);
            SensePenalty::L1Wavelet(match args.step {
                Some(step) => params.step(step),
                None => params.eigen_scaled(true),
            })
        }
        Method::Tv => SensePenalty::Tv(TvParams::new(lambda, args.iters)),
        _ => SensePenalty::L2(CgParams::new(args.iters).lambda(lambda)),
    }
}

struct Files<'a> {
    kspace: &'a str,
    traj: &'a str,
    maps: &'a str,
    output: &'a str,
}

fn reconstruct<T: ComplexElement>(
    app: &ClApp,
    args: &ReconArgs,
    files: &Files<'_>,
    data: cliper::HostArray,
) -> Result<()>
where
    AnyData: From<XData<T>>,
{
    let data = data.to_elements::<Complex64>(Path::new(files.kspace))?;
    let traj = read_file(files.traj)?.to_elements::<Complex64>(Path::new(files.traj))?;
    let maps = read_file(files.maps)?.to_elements::<Complex64>(Path::new(files.maps))?;
    let dims = [0, 1, 2].map(|d| maps.shape().get(d).copied().unwrap_or(1));
    let frames = Frames::read(&data, &traj, &dims, files)?;
    let coils = frames.coils;
    let (map_coils, map_values) = images_from_bart(&maps, &dims, files.maps)?;
    if map_coils != coils {
        return Err(Error::invalid(
            "cliper recon",
            format!("{}: {map_coils} coil maps for k-space of {coils} coils ({})", files.maps, files.kspace),
        ));
    }
    let narrow = |v: &[Complex64]| v.iter().map(|&c| T::from_c64(c)).collect::<Vec<T>>();
    let spatial = frames.points.first().map(|p| p.shape().to_vec()).unwrap_or_default();
    let maps = XData::from_slice(
        app,
        &std::iter::once(coils).chain(spatial.iter().copied()).collect::<Vec<_>>(),
        &narrow(&map_values),
    )?;
    let samples: Vec<Complex64> = frames.samples.concat();
    let y = XData::from_slice(app, &frames.samples_shape(), &narrow(&samples))?;
    let image_shape = frames.image_shape(&spatial);
    let image = XData::<T>::zeros(app, &image_shape)?;
    let method = args.method.unwrap_or(Method::CgSense);
    let lambda = penalty_weight(method, args.lambda)?;
    let penalty = penalty(args, method, lambda);
    let mut recon = NufftSense::with_frames(&y, &maps, &frames.points, &image, penalty, nufft_params(args)?);
    // pics's estimate comes from the adjoint image of the data as read, through the plan the reconstruction runs.
    let scaling = match args.scaling {
        Some(s) => s,
        None => BartScaling::from_image(&recon.adjoint_image()?)?.scale,
    };
    if !(scaling.is_finite() && scaling > 0.0) {
        return Err(Error::invalid("cliper recon", format!("--scaling {scaling}: it must be positive")));
    }
    // Divided in float64 before rounding to T, as the data were read.
    let divided: Vec<Complex64> = samples.iter().map(|v| v / scaling).collect();
    y.write(&narrow(&divided))?;
    recon.run()?;
    // BART's -S: back to the data's intensities.
    let image = if args.rescale {
        let scaled: Vec<T> = image.to_vec()?.iter().map(|v| T::from_c64(v.to_c64() * scaling)).collect();
        XData::from_slice(app, &image_shape, &scaled)?
    } else {
        image
    };
    let residual = recon.residuals()?.last().map(|r| format!("; relative residual {r:.3e}")).unwrap_or_default();
    frames.save(AnyData::from(image.clone()), spatial.len(), args, files.output)?;
    say!(
        "recon: {} with a trajectory ({} points{}, {coils} coils, image {image_shape:?}), {} iterations, λ {lambda}, \
         k-space divided by {scaling} ({}){residual}; wrote {}",
        method_name(method),
        frames.points.first().map_or(0, NufftPoints::len),
        frames.describe(),
        args.iters,
        if args.scaling.is_some() { "--scaling" } else { "bart pics -t's estimate from the adjoint image" },
        files.output
    );
    Ok(())
}
