//! `cliper-bench nufft`: type 1 and type 2 NUFFTs timed on the device after a warm-up, on points from an NPY file
//! (`[points, axes]` float64 in cycles per FOV, as scripts/bench/peer_nufft.py writes them and times FINUFFT,
//! SigPy or cuFINUFFT on), for the case: a 256² grid, 10⁶ points, tolerance 1e-6.

use cliper::prelude::*;
use cliper::{
    ComplexElement, Nufft, NufftDirection, NufftParams, NufftPoints, NufftSense, NufftTransform, Pipeline, Result,
    SensePenalty, Upsampling, read_npy,
};
use num_complex::Complex32;
use std::path::Path;
use std::time::Instant;

/// Times `reps` forward and adjoint transforms of the points in `points` on an image of `shape` in `T`.
pub(crate) fn run<T: ComplexElement>(
    app: &ClApp,
    points: &Path,
    shape: &[usize],
    tolerance: f64,
    upsampling: Option<f64>,
    reps: usize,
    profile: bool,
) -> Result<()> {
    let coords = read_npy(points)?.to_elements::<f64>(points)?;
    let coords: Vec<f64> = coords.iter().copied().collect();
    let points = NufftPoints::named(shape, coords, &points.display().to_string())?;
    let upsampling = upsampling.map_or(Upsampling::Auto, Upsampling::Factor);
    let plan_clock = Instant::now();
    let mut nufft =
        Nufft::<T>::new(app, &points, 1, NufftParams::default().tolerance(tolerance).upsampling(upsampling))?;
    app.finish()?;
    let plan_s = plan_clock.elapsed().as_secs_f64();
    let image = XData::<T>::from_slice(
        app,
        &nufft.image_shape(),
        &vec![T::from_c64(num_complex::Complex64::new(0.5, -0.25)); shape.iter().product()],
    )?;
    let values = XData::<T>::from_slice(
        app,
        &nufft.points_shape(),
        &vec![T::from_c64(num_complex::Complex64::new(1.0, 0.5)); points.len()],
    )?;
    let out_values = XData::<T>::zeros(app, &nufft.points_shape())?;
    let out_image = XData::<T>::zeros(app, &nufft.image_shape())?;
    let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        f()?;
        app.finish()?;
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps.max(1) {
            let clock = Instant::now();
            f()?;
            app.finish()?;
            times.push(clock.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        Ok(times.get(times.len() / 2).copied().unwrap_or(0.0))
    };
    let type2 = time(&mut || nufft.forward(&image, &out_values))?;
    let type1 = time(&mut || nufft.adjoint(&values, &out_image))?;
    if profile {
        let params = NufftParams::default().tolerance(tolerance).upsampling(upsampling);
        for (direction, from, to) in
            [(NufftDirection::Adjoint, &values, &out_image), (NufftDirection::Forward, &image, &out_values)]
        {
            let mut pipeline = Pipeline::new(app);
            pipeline.push(Box::new(NufftTransform::new(from, to, &points, direction, params)));
            pipeline.run()?;
            println!("{direction:?}:\n{}", pipeline.profile()?);
        }
    }
    let kernel = nufft.kernel();
    println!(
        "nufft {} {:?}, {} points, ε {tolerance:e} on {}: type 1 {:.2} ms, type 2 {:.2} ms (medians of {reps}); plan {:.1} ms; \
         kernel width {}, β {:.2}, upsampling {}, fine grid {:?}",
        T::NAME,
        shape,
        points.len(),
        app.device().name,
        type1 * 1e3,
        type2 * 1e3,
        plan_s * 1e3,
        kernel.width,
        kernel.beta,
        kernel.upsampling,
        nufft.fine_shape()
    );
    Ok(())
}

/// CG-SENSE with a trajectory (`bart pics -t TRAJ -l2 -r λ -i N -w 1`): BART-layout k-space, trajectory and maps,
/// one warm-up run (plans the NUFFT, sorts the points, computes the Toeplitz kernel), then `reps` timed launches;
/// saves the image (BART CFL) to `out` if given, to compare with BART's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn recon(
    app: &ClApp,
    kspace: &Path,
    traj: &Path,
    maps: &Path,
    penalty: SensePenalty,
    iterations: usize,
    dcf: bool,
    reps: usize,
    out: Option<&Path>,
) -> Result<()> {
    let read = |p: &Path| -> Result<cliper::ndarray::ArrayD<num_complex::Complex64>> {
        cliper::read_file(p)?.to_elements::<num_complex::Complex64>(p)
    };
    let (k, t, s) = (read(kspace)?, read(traj)?, read(maps)?);
    let dims = [0, 1, 2].map(|d| s.shape().get(d).copied().unwrap_or(1));
    let points = NufftPoints::from_bart(&t, &dims, &traj.display().to_string())?;
    let (coils, samples) = cliper::samples_from_bart(&k, t.shape(), &kspace.display().to_string())?;
    let narrow =
        |v: &[num_complex::Complex64]| v.iter().map(|c| Complex32::new(c.re as f32, c.im as f32)).collect::<Vec<_>>();
    let (_, map_values) = cliper::images_from_bart(&s, &dims, &maps.display().to_string())?;
    let mut map_shape = vec![coils];
    map_shape.extend(points.shape());
    let maps = XData::from_slice(app, &map_shape, &narrow(&map_values))?;
    let y = XData::from_slice(app, &[coils, points.len()], &narrow(&samples))?;
    let image = XData::<Complex32>::zeros(app, points.shape())?;
    if dcf {
        let clock = Instant::now();
        let weights = cliper::DensityCompensation::pipe_menon(&points, cliper::DcfParams::default())?;
        println!(
            "dcf pipe-menon {} points on {:?}: {:.1} ms on the host ({} threads); largest cell weight {:.3}",
            points.len(),
            points.shape(),
            clock.elapsed().as_secs_f64() * 1e3,
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            weights.cell_weights().iter().fold(0.0f64, |m, &w| m.max(w))
        );
    }
    let mut recon = NufftSense::new(&y, &maps, &points, &image, penalty, NufftParams::default());
    let (first_s, times) = crate::mri::timed(app, &mut recon, reps)?;
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    println!(
        "recon-traj {} {coils} coils × {:?}, {} points per coil, {iterations} iterations on {}: {:.2} ms (median of {}), \
         {:.3} ms per iteration; first run with setup {:.1} ms",
        penalty.name(),
        points.shape(),
        points.len(),
        app.device().name,
        median * 1e3,
        times.len(),
        median * 1e3 / iterations.max(1) as f64,
        first_s * 1e3
    );
    if let Some(path) = out {
        let values = image.to_vec()?;
        let array = cliper::ndarray::ArrayD::from_shape_vec(cliper::ndarray::IxDyn(points.shape()), values)
            .map_err(|e| cliper::Error::invalid("cliper-bench", e.to_string()))?;
        cliper::write_cfl(path, &cliper::HostArray::C32(array))?;
    }
    Ok(())
}
