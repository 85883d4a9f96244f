//! `cliper-bench nufft`: type 1 and type 2 NUFFTs timed on the device after a warm-up, on points from an NPY file
//! (`[points, axes]` float64 in cycles per FOV, as scripts/bench/peer_nufft.py writes them and times FINUFFT,
//! SigPy or cuFINUFFT on), for the case: a 256² grid, 10⁶ points, tolerance 1e-6.

use cliper::prelude::*;
use cliper::{
    ComplexElement, Nufft, NufftDirection, NufftParams, NufftPoints, NufftTransform, Pipeline, Result, Upsampling,
    read_npy,
};
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
    let mut time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
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
