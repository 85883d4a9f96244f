//! `cliper-bench scaling`: the work of issue 31 on the first device of a set against every device of it, in one
//! process (docs/scaling.md): a batch of slices through pad → Gaussian → Sobel magnitude, a batch of SENSE
//! reconstructions, a 4-D array cut along its batch axis over the devices and gathered (checked equal to one
//! device's), and optionally a tiled chain on an NPY image larger than one device's budget.

use cliper::chain::{Chain, TileProgress, TileTiming};
use cliper::prelude::*;
use cliper::{
    ClApp, DevicePool, Filter, GradientMagnitude, GradientParams, KData, Pad, PadParams, PoolResult, ReconParams,
    Result, SimpleMRIRecon,
};
use num_complex::Complex32;
use std::path::Path;
use std::time::Instant;

/// What to run: the device set, the slice batch, the reconstruction batch, and the tiled image (if any).
pub(crate) struct Scaling {
    pub devices: String,
    pub slices: usize,
    pub size: usize,
    pub recons: usize,
    pub coils: usize,
    pub recon_size: usize,
    pub tiles: Option<([usize; 2], u64)>,
    pub dir: std::path::PathBuf,
}

/// A deterministic image with structure and noise: `seed` varies it.
fn image(n: usize, seed: usize) -> Vec<f32> {
    (0..n * n)
        .map(|k| {
            let (i, j) = (k / n, k % n);
            let hash = ((i * 2_654_435_761) ^ (j * 40_503) ^ (seed * 97)) % 1009;
            ((i + seed) % 257) as f32 / 257.0 + (j % 300) as f32 / 300.0 + hash as f32 / 4036.0
        })
        .collect()
}

/// One line per device of `results`: inputs, busy seconds (sum of its inputs' times), share of the inputs.
fn timeline<O>(pool: &DevicePool, results: &[PoolResult<O>], wall: f64) {
    for share in pool.shares(results) {
        println!(
            "    {}: {} inputs, busy {:.3} s of {wall:.3} s ({:.0}%), {:.1} ms per input",
            share.device,
            share.inputs,
            share.seconds,
            100.0 * share.seconds / wall.max(1e-9),
            1e3 * share.seconds / share.inputs.max(1) as f64
        );
    }
}

/// Runs `inputs` through `pool` after one input on each device alone (which builds its programs, kept by its
/// `ClApp`) and gives the run's results and wall time (each device's setup included, as a batch run has it).
fn timed<I: Sync, S, O: Send>(
    pool: &DevicePool,
    inputs: &[I],
    setup: impl Fn(&ClApp) -> Result<S> + Sync,
    work: impl Fn(&mut S, &ClApp, &I) -> Result<O> + Sync,
) -> Result<(Vec<PoolResult<O>>, f64)> {
    for app in pool.apps() {
        for r in DevicePool::new(vec![app.clone()])?.map(inputs.get(..1).unwrap_or_default(), &setup, &work) {
            r.result?;
        }
    }
    let clock = Instant::now();
    let results = pool.map(inputs, &setup, &work);
    let wall = clock.elapsed().as_secs_f64();
    if let Some(e) = results.iter().find_map(|r| r.result.as_ref().err()) {
        return Err(e.clone());
    }
    Ok((results, wall))
}

/// The first device alone against all of them: prints both times, the speed-up and each device's share, and
/// checks that every input's checksum is the same on both runs — bit for bit when the devices are all of one
/// model; otherwise (a GPU beside a CPU rounds differently) it reports the largest relative difference.
fn compare<I: Sync, S>(
    what: &str,
    one: &DevicePool,
    all: &DevicePool,
    inputs: &[I],
    setup: impl Fn(&ClApp) -> Result<S> + Sync,
    work: impl Fn(&mut S, &ClApp, &I) -> Result<f64> + Sync,
) -> Result<()> {
    let (single, t1) = timed(one, inputs, &setup, &work)?;
    let (spread, tn) = timed(all, inputs, &setup, &work)?;
    let sums =
        |r: &[PoolResult<f64>]| r.iter().map(|r| r.result.as_ref().copied().unwrap_or(f64::NAN)).collect::<Vec<_>>();
    let (a, b) = (sums(&single), sums(&spread));
    let one_model =
        all.apps().iter().all(|app| app.device().name == one.apps().first().map_or("", |o| &o.device().name));
    let worst = a.iter().zip(&b).map(|(x, y)| (x - y).abs() / x.abs().max(1e-30)).fold(0.0, f64::max);
    let same = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits());
    let verdict = match (same, one_model) {
        (true, _) => "same checksums per input on both runs".to_string(),
        (false, false) => format!("checksums within {worst:.1e} relative: the devices are of different kinds"),
        (false, true) => "DIFFERENT checksums".to_string(),
    };
    println!("{what}: one device {t1:.3} s, {} devices {tn:.3} s: {:.2}× ({verdict})", all.apps().len(), t1 / tn);
    timeline(one, &single, t1);
    timeline(all, &spread, tn);
    if !same && (one_model || worst > 1e-4) {
        return Err(cliper::Error::invalid("scaling", format!("{what}: the devices disagree ({worst:.1e})")));
    }
    Ok(())
}

/// The slice batch: each input is one `size`² slice uploaded, padded by 8 (reflect), blurred (Gaussian σ 2) and
/// reduced to its Sobel gradient magnitude, then downloaded; the checksum is the downloaded image's sum.
fn slices(one: &DevicePool, all: &DevicePool, count: usize, size: usize) -> Result<()> {
    let sources: Vec<Vec<f32>> = (0..8).map(|s| image(size, s)).collect();
    let inputs: Vec<usize> = (0..count).collect();
    let padded = size + 16;
    type State =
        (XData<f32>, XData<f32>, Pad<f32>, Convolution<f32, f32>, GradientMagnitude<f32>, XData<f32>, Vec<f32>);
    let setup = |app: &ClApp| -> Result<State> {
        let x = XData::zeros(app, &[size, size])?;
        let p = XData::zeros(app, &[padded, padded])?;
        let g = XData::zeros(app, &[padded, padded])?;
        let e = XData::zeros(app, &[padded, padded])?;
        let mut pad = Pad::new(&x, &p, PadParams::new(&[(8, 8)]).border(Border::Reflect));
        let mut blur = Convolution::new(&p, &Filter::<f32>::gaussian(2.0, 2)?, &g, ConvParams::default());
        let mut sobel = GradientMagnitude::new(&g, &e, GradientParams::default());
        pad.init()?;
        blur.init()?;
        sobel.init()?;
        Ok((x, e, pad, blur, sobel, g, vec![0.0; padded * padded]))
    };
    let work = |state: &mut State, _: &ClApp, &i: &usize| -> Result<f64> {
        let (x, e, pad, blur, sobel, _, host) = state;
        x.write(sources.get(i % sources.len()).map(Vec::as_slice).unwrap_or_default())?;
        pad.launch()?;
        blur.launch()?;
        sobel.launch()?;
        e.read_into(host)?;
        Ok(host.iter().map(|&v| v as f64).sum::<f64>())
    };
    compare(&format!("{count} slices of {size}² (pad → Gaussian → Sobel magnitude)"), one, all, &inputs, setup, work)
}

/// The reconstruction batch: each input is `coils` × `size`² centred k-space uploaded, reconstructed by SENSE
/// (inverse FFT per coil, combination with the maps) and downloaded; the checksum is the image's sum.
fn recons(one: &DevicePool, all: &DevicePool, count: usize, coils: usize, size: usize) -> Result<()> {
    let n = coils * size * size;
    let sources: Vec<Vec<Complex32>> = (0..4)
        .map(|s| {
            let re = image(size, s);
            re.iter()
                .cycle()
                .take(n)
                .enumerate()
                .map(|(k, &r)| Complex32::new(r, ((k * 7 + s) % 13) as f32 / 13.0 - 0.5))
                .collect()
        })
        .collect();
    // Smooth maps, one per coil, normalised so that Σ|s|² = 1 at each pixel.
    let maps: Vec<Complex32> = (0..n)
        .map(|k| {
            let (c, i, j) = (k / (size * size), (k / size) % size, k % size);
            let phase = (c as f32 * 0.7) + (i as f32 + j as f32) / size as f32;
            Complex32::from_polar(1.0 / (coils as f32).sqrt(), phase)
        })
        .collect();
    let inputs: Vec<usize> = (0..count).collect();
    type State = (KData<Complex32>, XData<Complex32>, SimpleMRIRecon<Complex32>, Vec<Complex32>);
    let setup = |app: &ClApp| -> Result<State> {
        let m = XData::from_slice(app, &[coils, size, size], &maps)?;
        let k = KData::<Complex32>::zeros(app, &[], coils, &[size, size])?.with_sensitivity_maps(m)?;
        let out = XData::zeros(app, &[size, size])?;
        let mut recon = SimpleMRIRecon::new(&k, &out, ReconParams::default());
        recon.init()?;
        Ok((k, out, recon, vec![Complex32::default(); size * size]))
    };
    let work = |state: &mut State, _: &ClApp, &i: &usize| -> Result<f64> {
        let (k, out, recon, host) = state;
        k.as_xdata().write(sources.get(i % sources.len()).map(Vec::as_slice).unwrap_or_default())?;
        recon.launch()?;
        out.read_into(host)?;
        Ok(host.iter().map(|v| v.re as f64 + v.im as f64).sum::<f64>())
    };
    compare(&format!("{count} SENSE reconstructions of {coils} × {size}²"), one, all, &inputs, setup, work)
}

/// A `[frames, coils, size, size]` array cut along its frames over the devices (`DevicePool::map_axis`), each
/// piece blurred per image, gathered: must equal one device's result bit for bit.
fn split_axis(one: &DevicePool, all: &DevicePool, shape: [usize; 4]) -> Result<()> {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|k| ((k * 31 + 7) % 1013) as f32 / 1013.0).collect();
    let array = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), values)
        .map_err(|e| cliper::Error::invalid("scaling", e.to_string()))?;
    let blur = |_: &mut (), app: &ClApp, piece: ndarray::ArrayViewD<'_, f32>| {
        let x = XData::from_ndarray(app, &piece.to_owned())?;
        let y = XData::zeros(app, x.shape())?;
        Convolution::new(&x, &Filter::<f32>::gaussian(1.5, 2)?, &y, ConvParams::default()).run()?;
        y.to_ndarray()
    };
    let piece = shape[0].div_ceil(2 * all.apps().len()).max(1);
    let clock = Instant::now();
    let a = one.map_axis(&array, 0, piece, |_| Ok(()), blur)?;
    let t1 = clock.elapsed().as_secs_f64();
    let clock = Instant::now();
    let b = all.map_axis(&array, 0, piece, |_| Ok(()), blur)?;
    let tn = clock.elapsed().as_secs_f64();
    let one_model =
        all.apps().iter().all(|app| app.device().name == one.apps().first().map_or("", |o| &o.device().name));
    let worst = a.iter().zip(b.iter()).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    println!(
        "map_axis {shape:?} along axis 0 in pieces of {piece}: one device {t1:.3} s, {} devices {tn:.3} s; {}",
        all.apps().len(),
        match (a == b, one_model) {
            (true, _) => "gathered result equal to one device's".to_string(),
            (false, false) =>
                format!("gathered result within {worst:.1e} of one device's (devices of different kinds)"),
            (false, true) => "DIFFERENT from one device's".to_string(),
        }
    );
    // Values are in [0, 1): a CPU and a GPU differ by rounding only.
    if a != b && (one_model || worst > 1e-5) {
        return Err(cliper::Error::invalid("scaling", "map_axis over the devices differs from one device"));
    }
    Ok(())
}

/// The tiled chain (Gaussian → Sobel magnitude → threshold) on an NPY image made in `dir`, under `budget` per
/// device: one device, then every device of the set.
fn tiles(apps: &[ClApp], shape: [usize; 2], budget: u64, dir: &Path) -> Result<()> {
    let input = dir.join("scaling-tiles-in.npy");
    let [rows, cols] = shape;
    if std::fs::metadata(&input).map(|m| m.len()).ok() != Some((rows * cols * 4 + 128) as u64) {
        crate::tiles::make_input(&input, rows, cols)?;
    }
    let output = dir.join("scaling-tiles-out.npy");
    let text = crate::tiles::edge_chain(&input, &output, 2.0, None);
    let chain = Chain::from_toml(&text, Path::new("scaling.toml"))?;
    let limited: Vec<ClApp> = apps
        .iter()
        .map(|a| ClApp::builder().select(&a.device().id()).memory_limit(budget).build())
        .collect::<Result<_>>()?;
    let mut first: Option<Vec<u8>> = None;
    for set in [limited.get(..1).unwrap_or_default(), &limited[..]] {
        let pool = DevicePool::new(set.to_vec())?;
        let mut tiles: Vec<TileTiming> = Vec::new();
        let clock = Instant::now();
        let outcome = chain.run_tiled_on(&pool, None, |p| match p {
            TileProgress::Tile(t) => tiles.push(t.clone()),
            TileProgress::Planned(plan) => println!(
                "tiles on {} device(s), {budget} bytes each: {} tiles of {} rows, {} rows of context",
                set.len(),
                plan.tiles(),
                plan.rows,
                plan.halo
            ),
            TileProgress::Shrunk(r) => println!("  shrunk to {r} rows"),
        })?;
        let wall = clock.elapsed().as_secs_f64();
        println!("  {wall:.3} s end to end ({:.3} s completing the file)", outcome.save_s);
        for app in set {
            let device = format!("{} {}", app.device().id(), app.device().name);
            let mine: Vec<&TileTiming> = tiles.iter().filter(|t| t.device == device).collect();
            let sum = |f: fn(&TileTiming) -> f64| mine.iter().map(|t| f(t)).sum::<f64>();
            println!(
                "    {device}: {} tiles; read {:.3} s, upload {:.3}, compute {:.3}, download {:.3}, write {:.3}",
                mine.len(),
                sum(|t| t.read_s),
                sum(|t| t.upload_s),
                sum(|t| t.compute_s),
                sum(|t| t.download_s),
                sum(|t| t.write_s)
            );
        }
        let bytes = std::fs::read(&output).map_err(|source| cliper::Error::Io { path: output.clone(), source })?;
        match &first {
            None => first = Some(bytes),
            Some(f) => println!(
                "  output {} the one device's",
                if *f == bytes { "byte-identical to" } else { "DIFFERENT from" }
            ),
        }
    }
    std::fs::remove_file(&output).ok();
    Ok(())
}

pub(crate) fn run(s: &Scaling) -> Result<()> {
    let apps = ClApp::builder().select(&s.devices).build_all()?;
    println!("devices ({}):", s.devices);
    for app in &apps {
        println!("  {} {} ({} MiB)", app.device().id(), app.device().name, app.memory_limit() >> 20);
    }
    let one = DevicePool::new(apps.get(..1).unwrap_or_default().to_vec())?;
    let all = DevicePool::new(apps.clone())?;
    slices(&one, &all, s.slices, s.size)?;
    recons(&one, &all, s.recons, s.coils, s.recon_size)?;
    split_axis(&one, &all, [16, s.coils, s.recon_size, s.recon_size])?;
    // (16 frames: enough pieces for every device to take two.)
    if let Some((shape, budget)) = s.tiles {
        std::fs::create_dir_all(&s.dir).map_err(|source| cliper::Error::Io { path: s.dir.clone(), source })?;
        tiles(&apps, shape, budget, &s.dir)?;
    }
    Ok(())
}
