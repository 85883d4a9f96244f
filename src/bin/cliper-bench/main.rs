//! `cliper-bench`: times cliper's processes the way the peer benchmarks time theirs, so the numbers can be put
//! side by side (`docs/benchmarks.md`).
//!
//! Each case prints one line: `cliper <op> <size> <ms> ms <GB/s> GB/s ...`, where ms is the median over
//! several batches of the wall-clock time of `reps` back-to-back launches followed by one `finish` (the method
//! of `clblast_bench`), and `events` is the median device time from profiling events.

use clap::{Parser, Subcommand, ValueEnum};
use cliper::{ClApp, Element, Permute, Pipeline, Result, Transpose, TransposeTiles, XData};
use num_complex::{Complex32, Complex64};
use std::time::Instant;

#[derive(Parser)]
#[command(name = "cliper-bench", about = "Times cliper processes for comparison with peer libraries")]
struct Cli {
    #[command(subcommand)]
    case: Case,
}

#[derive(Clone, Copy, ValueEnum)]
enum Dtype {
    F32,
    F64,
    C32,
    C64,
}

#[derive(Subcommand)]
enum Case {
    /// Out-of-place transpose of a rows × cols matrix (CLBlast's omatcopy with transposition).
    Transpose {
        /// Rows of the input.
        #[arg(long, default_value_t = 16384)]
        rows: usize,
        /// Columns of the input (default: square).
        #[arg(long)]
        cols: Option<usize>,
        /// Matrices in the batch (shape [batch, rows, cols]); 1 for a single matrix.
        #[arg(long, default_value_t = 1)]
        batch: usize,
        /// Element type.
        #[arg(long, value_enum, default_value = "f32")]
        dtype: Dtype,
        /// Launches per timed batch.
        #[arg(long, default_value_t = 20)]
        reps: usize,
        /// Timed batches (the median is reported).
        #[arg(long, default_value_t = 5)]
        batches: usize,
        /// Tile shapes to try, `TILExROWS` (default: the device's table entry).
        #[arg(long, value_delimiter = ',')]
        tiles: Vec<String>,
        /// Compare every output element with a host transpose.
        #[arg(long)]
        check: bool,
    },
    /// Reordering the axes of an f32 array into a new array (numpy's transpose(axes) + copy).
    Permute {
        /// Input shape, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "256,512,512")]
        shape: Vec<usize>,
        /// The axis order, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1,0,2")]
        axes: Vec<usize>,
        /// Launches per timed batch.
        #[arg(long, default_value_t = 20)]
        reps: usize,
        /// Timed batches (the median is reported).
        #[arg(long, default_value_t = 5)]
        batches: usize,
    },
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let app = ClApp::builder().use_env(true).profiling(true).build()?;
    println!("device: {} ({}, {})", app.device().name, app.device().platform_name, app.device().version);
    match cli.case {
        Case::Permute { shape, axes, reps, batches } => permute(&app, &shape, &axes, Timing { reps, batches }),
        Case::Transpose { rows, cols, batch, dtype, reps, batches, tiles, check } => {
            let cols = cols.unwrap_or(rows);
            let tiles: Vec<Option<TransposeTiles>> = if tiles.is_empty() {
                vec![None]
            } else {
                tiles.iter().map(|t| parse_tiles(t).map(Some)).collect::<Result<_>>()?
            };
            let t = Timing { reps, batches };
            let shape = [batch, rows, cols];
            match dtype {
                Dtype::F32 => transpose::<f32>(&app, shape, &tiles, t, check),
                Dtype::F64 => transpose::<f64>(&app, shape, &tiles, t, check),
                Dtype::C32 => transpose::<Complex32>(&app, shape, &tiles, t, check),
                Dtype::C64 => transpose::<Complex64>(&app, shape, &tiles, t, check),
            }
        }
    }
}

fn parse_tiles(text: &str) -> Result<TransposeTiles> {
    let bad = || cliper::Error::InvalidArgument {
        op: "cliper-bench".into(),
        reason: format!("tile shape `{text}` is not TILExROWS, like 32x8"),
    };
    let (t, r) = text.split_once('x').ok_or_else(bad)?;
    Ok(TransposeTiles { tile: t.trim().parse().map_err(|_| bad())?, rows: r.trim().parse().map_err(|_| bad())? })
}

#[derive(Clone, Copy)]
struct Timing {
    reps: usize,
    batches: usize,
}

/// Median wall-clock ms per launch and median event ms of a pipeline.
fn time_pipeline(app: &ClApp, pipeline: &mut Pipeline, t: Timing) -> Result<(f64, f64)> {
    pipeline.init()?;
    for _ in 0..3 {
        pipeline.launch()?;
    }
    app.finish()?;
    let mut wall = Vec::with_capacity(t.batches);
    for _ in 0..t.batches {
        let start = Instant::now();
        for _ in 0..t.reps {
            pipeline.launch()?;
        }
        app.finish()?;
        wall.push(start.elapsed().as_secs_f64() * 1e3 / t.reps as f64);
    }
    let mut events = Vec::with_capacity(t.reps);
    for _ in 0..t.reps {
        events.push(pipeline.profile()?.total_ms());
    }
    Ok((median(&mut wall), median(&mut events)))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Pseudo-random values in [-1, 1) (never zeros: timing on zeros can flatter a kernel).
fn random_data<T: Element>(n: usize) -> Vec<T> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    (0..n).map(|_| T::from_c64(Complex64::new(next(), next()))).collect()
}

fn permute(app: &ClApp, shape: &[usize], axes: &[usize], timing: Timing) -> Result<()> {
    let n: usize = shape.iter().product();
    let input = XData::from_slice(app, shape, &random_data::<f32>(n))?;
    let output = XData::<f32>::zeros(app, &Permute::<f32>::output_shape(shape, axes)?)?;
    let permute = Permute::new(&input, &output, axes);
    let mut pipeline = Pipeline::new(app).then(permute);
    let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
    let bytes = 2.0 * (n * 4) as f64;
    println!(
        "cliper  permute   f32  {:<22} {:>9.4} ms {:>8.1} GB/s   events {:>9.4} ms {:>8.1} GB/s",
        format!("{shape:?}->{axes:?}").replace(' ', ""),
        wall,
        bytes / wall / 1e6,
        events,
        bytes / events / 1e6
    );
    Ok(())
}

fn transpose<T: Element>(
    app: &ClApp,
    [batch, rows, cols]: [usize; 3],
    tiles: &[Option<TransposeTiles>],
    timing: Timing,
    check: bool,
) -> Result<()> {
    let started = Instant::now();
    let progress = |what: &str| eprintln!("[{:7.2} s] {what}", started.elapsed().as_secs_f64());
    progress(&format!("transpose {} {batch}x{rows}x{cols}: making data", T::NAME));
    let host = random_data::<T>(batch * rows * cols);
    progress("uploading");
    let input = XData::from_slice(app, &[batch, rows, cols], &host)?;
    progress("allocating and zeroing the output");
    let output = XData::<T>::zeros(app, &[batch, cols, rows])?;
    app.finish()?;
    let bytes = 2.0 * (batch * rows * cols * std::mem::size_of::<T>()) as f64;
    let size = if batch == 1 { format!("{rows}x{cols}") } else { format!("{batch}x{rows}x{cols}") };
    for tile in tiles {
        let process = match tile {
            Some(t) => Transpose::new(&input, &output).with_tiles(*t),
            None => Transpose::new(&input, &output),
        };
        let shown = tile.unwrap_or_else(|| TransposeTiles::for_device(app.device(), std::mem::size_of::<T>()));
        let mut pipeline = Pipeline::new(app).then(process);
        progress(&format!("timing tiles {}x{}", shown.tile, shown.rows));
        let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
        println!(
            "cliper  transpose {:<4} {:<16} {:>9.4} ms {:>8.1} GB/s   events {:>9.4} ms {:>8.1} GB/s   tiles {}x{}",
            T::NAME,
            size,
            wall,
            bytes / wall / 1e6,
            events,
            bytes / events / 1e6,
            shown.tile,
            shown.rows
        );
        if check {
            progress("checking");
            let got = output.to_vec()?;
            let plane = rows * cols;
            let wrong = (0..batch * plane)
                .filter(|&n| {
                    let (b, k) = (n / plane, n % plane);
                    got[b * plane + (k % cols) * rows + k / cols] != host[n]
                })
                .count();
            println!("check: {wrong} of {} elements wrong", batch * plane);
            if wrong > 0 {
                return Err(cliper::Error::InvalidArgument {
                    op: "cliper-bench".into(),
                    reason: "the transpose is wrong".into(),
                });
            }
        }
    }
    Ok(())
}
