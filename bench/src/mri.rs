//! `cliper-bench recon`: an iterative MRI reconstruction (CG-SENSE, ℓ1-wavelet, TV) timed on the device after a
//! warm-up, for comparison with `bart pics` on the same files (scripts/bench/mri-vs-bart.sh); the image can be
//! saved to check it against BART's. `--method espirit` (or `walsh`) times the coil maps alone, to set beside
//! `bart ecalib -m1`.

use cliper::prelude::*;
use cliper::{
    CgParams, CgSense, EspiritMaps, EspiritParams, L1WaveletParams, L1WaveletSense, Result, TvParams, TvSense,
    WalshMaps, WalshParams, write_cfl,
};
use std::path::Path;
use std::time::Instant;

/// Loads `kspace` (BART CFL, maps beside it as `_sens` or from `maps`), runs `method` once to warm up and then
/// `reps` times, and prints the median time and the time per iteration; saves the image to `out` if given.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run(
    app: &ClApp,
    kspace: &Path,
    maps: Option<&Path>,
    method: &str,
    lambda: f64,
    iterations: usize,
    reps: usize,
    out: Option<&Path>,
) -> Result<()> {
    if method == "espirit" || method == "walsh" {
        return maps_run(app, kspace, method, reps, out);
    }
    let load = Instant::now();
    let k = KData::<Complex32>::load(app, kspace)?;
    let k = match maps {
        Some(m) => k.with_maps_file(m)?,
        None => k,
    };
    let load_s = load.elapsed().as_secs_f64();
    let image = XData::<Complex32>::zeros(app, &CgSense::output_shape(&k)?)?;
    let mut process: Box<dyn Process> = match method {
        "cg" => Box::new(CgSense::new(&k, &image, CgParams::new(iterations).lambda(lambda))),
        "l1" => Box::new(L1WaveletSense::new(&k, &image, L1WaveletParams::new(lambda, iterations))),
        "tv" => Box::new(TvSense::new(&k, &image, TvParams::new(lambda, iterations))),
        other => return Err(Error::invalid("cliper-bench recon", format!("method {other}: give cg, l1 or tv"))),
    };
    let (first_s, times) = timed(app, &mut *process, reps)?;
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    println!(
        "recon {method} {} coils × {:?}, λ {lambda}, {iterations} iterations on {}: {:.2} ms (median of {}), {:.3} ms per \
         iteration; first run with setup {:.1} ms; load {:.1} ms",
        k.num_coils(),
        k.spatial_shape(),
        app.device().name,
        median * 1e3,
        times.len(),
        median * 1e3 / iterations.max(1) as f64,
        first_s * 1e3,
        load_s * 1e3
    );
    if let Some(path) = out {
        write_cfl(path, &HostArray::C32(image.to_ndarray()?))?;
    }
    Ok(())
}

/// Coil maps of `kspace` by ESPIRiT or Walsh's method: one warm-up run (compilation, tables), then `reps` timed
/// launches (each reads the calibration band back, so the time includes the host's part and the transfers).
fn maps_run(app: &ClApp, kspace: &Path, method: &str, reps: usize, out: Option<&Path>) -> Result<()> {
    let k = KData::<Complex32>::load(app, kspace)?;
    let maps = XData::<Complex32>::zeros(app, &EspiritMaps::output_shape(&k)?)?;
    let mut espirit = EspiritMaps::new(&k, &maps, EspiritParams::default());
    let mut walsh = WalshMaps::from_kspace(&k, &maps, WalshParams::default());
    let process: &mut dyn Process = if method == "walsh" { &mut walsh } else { &mut espirit };
    let (first_s, times) = timed(app, &mut *process, reps)?;
    let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
    let strategy = if method == "walsh" {
        walsh.strategy().map(|s| s.to_string())
    } else {
        espirit.strategy().map(|s| s.to_string())
    };
    println!(
        "maps {method} {} coils × {:?} on {}: {:.2} ms (median of {}; min {:.2} ms); first run with setup {:.1} ms; {}",
        k.num_coils(),
        k.spatial_shape(),
        app.device().name,
        median * 1e3,
        times.len(),
        times.first().copied().unwrap_or(0.0) * 1e3,
        first_s * 1e3,
        strategy.unwrap_or_default()
    );
    if let Some(path) = out {
        write_cfl(path, &HostArray::C32(maps.to_ndarray()?))?;
    }
    Ok(())
}

/// One run of `process` with its set-up (seconds), then `reps` timed launches, each waited for (sorted seconds).
pub(crate) fn timed(app: &ClApp, process: &mut dyn Process, reps: usize) -> Result<(f64, Vec<f64>)> {
    let first = Instant::now();
    process.run()?;
    app.finish()?;
    let first_s = first.elapsed().as_secs_f64();
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps.max(1) {
        let clock = Instant::now();
        process.launch()?;
        app.finish()?;
        times.push(clock.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok((first_s, times))
}
