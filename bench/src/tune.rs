//! `cliper-bench tune`: searches GEMM tiles on the current device and writes a [`GemmTable`] for it.
//!
//! Per element type: every tile choice of the search space that the device can build (local-memory tiles on
//! GPUs, register blocks on CPUs) is put in a seeded random order with the current table entry first, then
//! timed on one `size`³ product until the type's time budget runs out; the five fastest are timed again with
//! more launches, the winner's output is checked against float64 host arithmetic, and the winner becomes the
//! type's entry. Each candidate's line shows its time, rate and the kernel's private memory (register spills).

use std::path::Path;
use std::time::Instant;

use cliper::Result;
use cliper::prelude::*;
use num_complex::{Complex32, Complex64};

use crate::case::value_at;
use crate::measure::{median, random_data, random_data_seeded};
use crate::suite::today;

/// What `tune` was asked to do.
pub(crate) struct TuneArgs<'a> {
    pub(crate) types: &'a [String],
    pub(crate) sizes: &'a [usize],
    pub(crate) budget_s: f64,
    pub(crate) out: Option<&'a Path>,
    pub(crate) ptx_dir: Option<&'a Path>,
    pub(crate) seed: u64,
    /// Candidates to time first (after the current entry), such as the best of an earlier run.
    pub(crate) first: &'a [GemmStrategy],
}

/// One timed candidate.
#[derive(Clone, Copy)]
struct Timed {
    strategy: GemmStrategy,
    ms: f64,
}

pub(crate) fn run(app: &ClApp, args: &TuneArgs) -> Result<()> {
    let info = app.device();
    let default = [if info.kind == DeviceKind::Cpu { 512 } else { 4096 }];
    let sizes = if args.sizes.is_empty() { &default[..] } else { args.sizes };
    let mut entries = Vec::new();
    for (name, &size) in args.types.iter().flat_map(|t| sizes.iter().map(move |s| (t, s))) {
        let entry = match name.as_str() {
            "f32" => tune_type::<f32>(app, size, args)?,
            "f64" if !info.fp64 => {
                println!("tune f64: skipped, the device has no cl_khr_fp64");
                continue;
            }
            "f64" => tune_type::<f64>(app, size, args)?,
            "c32" => tune_type::<Complex32>(app, size, args)?,
            "c64" if !info.fp64 => continue,
            "c64" => tune_type::<Complex64>(app, size, args)?,
            other => {
                return Err(Error::invalid("cliper-bench tune", format!("type `{other}` is not f32, f64, c32 or c64")));
            }
        };
        entries.push(entry);
    }
    let table = GemmTable { gemm: entries };
    let text = format!(
        "# GEMM table for {} ({}, driver {}), written by `cliper-bench tune` on {}.\n\
         # Use it with CLIPER_GEMM_TABLE=<this file>, or copy the entries into src/process/linalg/gemm_tiles.toml.\n\n{}",
        info.name,
        info.platform_name,
        info.driver_version,
        today(),
        toml::to_string(&table).map_err(|e| Error::invalid("cliper-bench tune", format!("writing TOML: {e}")))?
    );
    match args.out {
        Some(path) => {
            // Written beside the target and renamed, so an interrupted run leaves the old table intact.
            let tmp = path.with_extension("toml.partial");
            std::fs::write(&tmp, &text).map_err(|source| Error::Io { path: tmp.clone(), source })?;
            std::fs::rename(&tmp, path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
            println!("wrote {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// The search space for `T` on this device, in a seeded random order after the current choice.
fn candidates<T: Element>(app: &ClApp, size: usize, seed: u64, picks: &[GemmStrategy]) -> Vec<GemmStrategy> {
    let info = app.device();
    let current = GemmStrategy::for_size::<T>(info, size);
    // Registers one output takes (a complex double takes four 32-bit registers).
    let words = std::mem::size_of::<T>() / 4;
    let mut all = Vec::new();
    if info.kind == DeviceKind::Cpu {
        for mwg in [8, 16, 32, 64] {
            for nwg in [16, 32, 64, 128] {
                for mdimc in [1, 2, 4, 8, 16] {
                    for ndimc in [1, 2, 4, 8, 16] {
                        let t = GemmTiles::scalar(mwg, nwg, 16, mdimc, ndimc);
                        let (wptm, wptn) = (mwg / mdimc, nwg / ndimc);
                        let threads = mdimc * ndimc;
                        if (4..=256).contains(&threads)
                            && (1..=8).contains(&wptm)
                            && (4..=32).contains(&wptn)
                            && wptm * wptn * words <= 128
                            && threads <= info.max_work_group_size
                            && mwg % mdimc == 0
                            && nwg % ndimc == 0
                        {
                            all.push(GemmStrategy::Blocked(t));
                        }
                    }
                }
            }
        }
    } else {
        // Accumulators take `outputs · words` registers: 32 or 64 leave room for two 256-work-item groups per
        // multiprocessor within 65 536 registers (measured on the H100: 128×128×16/16×16/4×4 needed 130
        // registers and ran at 30 TF/s, the same tiles 8 deep 128 registers and 39.6); 128 only with at most
        // 128 work-items. Vector reads of at most 16 bytes (one 128-bit load).
        for mwg in [32, 64, 128, 256] {
            for nwg in [32, 64, 128, 256] {
                for kwg in [8, 16, 32] {
                    for mdimc in [8, 16, 32] {
                        for ndimc in [8, 16, 32] {
                            for vwm in [1, 2, 4] {
                                for vwn in [1, 2, 4] {
                                    let t = GemmTiles { mwg, nwg, kwg, mdimc, ndimc, vwm, vwn };
                                    let threads = mdimc * ndimc;
                                    let registers = (mwg / mdimc) * (nwg / ndimc) * words;
                                    let bytes = std::mem::size_of::<T>();
                                    if [64, 128, 256].contains(&threads)
                                        && (registers == 32 || registers == 64 || (registers == 128 && threads <= 128))
                                        && vwm * bytes <= 16
                                        && vwn * bytes <= 16
                                        && t.validate::<T>(info).is_ok()
                                    {
                                        all.push(GemmStrategy::Tiled(t));
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    // Fisher–Yates with xorshift64.
    let mut state = seed.max(1);
    for i in (1..all.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        all.swap(i, (state % (i as u64 + 1)) as usize);
    }
    // The current entry, then the caller's picks, then the rest.
    let mut first = vec![current];
    let valid = |s: &GemmStrategy| match s {
        GemmStrategy::Tiled(t) => t.validate::<T>(info).is_ok(),
        _ => true,
    };
    first.extend(picks.iter().copied().filter(|p| *p != current && valid(p)));
    all.retain(|s| !first.contains(s));
    first.extend(all);
    first
}

/// What the driver's build log says about the kernel `mm` runs (NVIDIA with `-cl-nv-verbose` in
/// `CLIPER_BUILD_OPTIONS`: "Used 128 registers, 16 bytes spill stores …"), or "" when it says nothing.
pub(crate) fn kernel_resources<T: Element>(mm: &MatMul<T>) -> String {
    let Some((program, kernel)) = mm.compiled() else { return String::new() };
    let log = program.build_log().unwrap_or_default();
    let mut lines = log.lines().skip_while(|l| !l.contains(&format!("'{}'", kernel.name())));
    let mut found = Vec::new();
    for line in lines.by_ref().skip(1) {
        if line.contains("Compiling entry function") {
            break;
        }
        if let Some((_, info)) = line.split_once("info    :") {
            found.push(info.trim().to_string());
        }
    }
    found.join("; ")
}

/// Median ms per product of `launches` back-to-back launches in three batches (after one warm-up).
fn time_product<T: Element>(app: &ClApp, mm: &mut MatMul<T>, launches: usize) -> Result<f64> {
    mm.launch()?;
    app.finish()?;
    let mut batches = Vec::with_capacity(3);
    for _ in 0..3 {
        let start = Instant::now();
        for _ in 0..launches {
            mm.launch()?;
        }
        app.finish()?;
        batches.push(start.elapsed().as_secs_f64() * 1e3 / launches as f64);
    }
    Ok(median(&mut batches))
}

/// Runs the winner once more and checks its output on 128 sampled entries against float64 (relative to
/// |A|·|B|, within the bound of a size-long sum); returns the product, built, for its program.
fn check_winner<T: Element>(
    [a, b, c]: [&XData<T>; 3],
    [ha, hb]: [&[T]; 2],
    strategy: GemmStrategy,
) -> Result<MatMul<T>> {
    let size = c.shape().first().copied().unwrap_or(0);
    let mut mm = MatMul::new(a, b, c, MatMulParams::default().strategy(strategy));
    mm.init()?;
    mm.launch()?;
    let got = c.to_vec()?;
    let mut worst = 0.0f64;
    for s in 0..128 {
        let (i, j) = ((s * 7919 + 3) % size, (s * 104_729 + 11) % size);
        let (mut want, mut mag) = (Complex64::new(0.0, 0.0), 0.0);
        for l in 0..size {
            let (x, y) = (value_at(ha, i * size + l)?.to_c64(), value_at(hb, l * size + j)?.to_c64());
            want += x * y;
            mag += x.norm() * y.norm();
        }
        worst = worst.max((value_at(&got, i * size + j)?.to_c64() - want).norm() / mag);
    }
    let eps = if T::IS_DOUBLE { f64::EPSILON / 2.0 } else { f32::EPSILON as f64 / 2.0 };
    let bound = (size + 2) as f64 * eps * if T::IS_COMPLEX { 4.0 } else { 1.0 };
    println!("check {}: worst |Δ|/(|A||B|) over 128 samples {worst:.2e} (bound {bound:.2e})", T::NAME);
    if worst > bound {
        return Err(Error::invalid("cliper-bench tune", format!("the winner {strategy} computed a wrong product")));
    }
    Ok(mm)
}

fn tune_type<T: Element>(app: &ClApp, size: usize, args: &TuneArgs) -> Result<GemmTableEntry> {
    let info = app.device();
    let (ha, hb) = (random_data::<T>(size * size), random_data_seeded::<T>(size * size, 0x9E37_79B9_7F4A_7C15));
    let a = XData::from_slice(app, &[size, size], &ha)?;
    let b = XData::from_slice(app, &[size, size], &hb)?;
    let c = XData::<T>::zeros(app, &[size, size])?;
    let flops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (size as f64).powi(3);
    let rate = |ms: f64| flops / ms / 1e6;
    let space = candidates::<T>(app, size, args.seed, args.first);
    println!("tune {}: {} candidates at {size}³, budget {} s", T::NAME, space.len(), args.budget_s);
    let start = Instant::now();
    let mut timed: Vec<Timed> = Vec::new();
    let mut failed = 0;
    for (i, &strategy) in space.iter().enumerate() {
        if i > 0 && start.elapsed().as_secs_f64() > args.budget_s {
            break;
        }
        let mut mm = MatMul::new(&a, &b, &c, MatMulParams::default().strategy(strategy));
        let outcome = mm.init().and_then(|()| {
            let first = time_product(app, &mut mm, 1)?;
            // About 40 ms of launches per batch, at least 2.
            let launches = ((40.0 / first) as usize).clamp(2, 50);
            time_product(app, &mut mm, launches)
        });
        let private = mm.compiled().and_then(|(_, k)| k.private_mem_bytes().ok()).unwrap_or(0);
        match outcome {
            Ok(ms) => {
                println!(
                    "tune {} {:<28} {:9.4} ms {:9.1} GFLOP/s  private {private} B  {}",
                    T::NAME,
                    strategy.to_string(),
                    ms,
                    rate(ms),
                    kernel_resources(&mm)
                );
                timed.push(Timed { strategy, ms });
            }
            Err(e) => {
                failed += 1;
                let first = e.to_string().lines().next().unwrap_or_default().to_string();
                println!("tune {} {:<28} failed: {first}", T::NAME, strategy.to_string());
            }
        }
    }
    let tried = timed.len() + failed;
    timed.sort_by(|x, y| x.ms.total_cmp(&y.ms));
    // The front runners again, with more launches: one batch of short runs is noisy.
    let mut finals = Vec::new();
    for t in timed.iter().take(5) {
        let mut mm = MatMul::new(&a, &b, &c, MatMulParams::default().strategy(t.strategy));
        mm.init()?;
        let launches = ((400.0 / t.ms) as usize).clamp(3, 200);
        let ms = time_product(app, &mut mm, launches)?;
        println!("final {} {:<28} {:9.4} ms {:9.1} GFLOP/s", T::NAME, t.strategy.to_string(), ms, rate(ms));
        finals.push(Timed { strategy: t.strategy, ms });
    }
    finals.sort_by(|x, y| x.ms.total_cmp(&y.ms));
    let best = *finals
        .first()
        .ok_or_else(|| Error::invalid("cliper-bench tune", format!("no {} candidate ran on {}", T::NAME, info.name)))?;
    let current = space
        .first()
        .and_then(|&first| finals.iter().chain(timed.iter()).find(|t| t.strategy == first))
        .map_or_else(|| "did not run".to_string(), |t| format!("{:.1} GFLOP/s", rate(t.ms)));

    let mm = check_winner([&a, &b, &c], [&ha, &hb], best.strategy)?;
    if let (Some(dir), Some((program, _))) = (args.ptx_dir, mm.compiled()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
        let path = dir.join(format!("gemm-{}-{}.bin", T::NAME, best.strategy.to_string().replace(['/', ':'], "_")));
        std::fs::write(&path, program.binary()?).map_err(|source| Error::Io { path: path.clone(), source })?;
        println!("binary {}", path.display());
    }
    let note = format!(
        "cliper-bench tune {}: {:.1} GFLOP/s at {size}³ ({tried} of {} candidates in {:.0} s; the entry before: {current})",
        today(),
        rate(best.ms),
        space.len(),
        start.elapsed().as_secs_f64()
    );
    println!("best {} {} {note}", T::NAME, best.strategy);
    Ok(GemmTableEntry {
        vendor: Some(info.vendor.clone()),
        device: Some(info.name.clone()),
        kind: match info.kind {
            DeviceKind::Cpu => Some("cpu".into()),
            DeviceKind::Gpu => Some("gpu".into()),
            DeviceKind::Accelerator => Some("accelerator".into()),
            DeviceKind::Other => None,
        },
        compute_capability: info.compute_capability.map(|(major, minor)| format!("{major}.{minor}")),
        compute_units: Some(info.compute_units),
        element: T::NAME.to_string(),
        size: Some(size),
        kernel: best.strategy.to_string(),
        note: Some(note),
    })
}
