//! `cliper-bench`: times cliper's processes the way the peer benchmarks time theirs, so the numbers can be put
//! side by side (`docs/benchmarks.md`).
//!
//! Each case prints one line: `cliper <op> <size> <ms> ms <GB/s> GB/s ...`, where ms is the median over
//! several batches of the wall-clock time of `reps` back-to-back launches followed by one `finish` (the method
//! of `clblast_bench`), and `events` is the median device time from profiling events.

use clap::{Args, Parser, Subcommand, ValueEnum};
use cliper::{
    Border, ClApp, ConvAlgorithm, ConvParams, Convolution, Dot, DotKind, Element, Filter, FilterBank,
    FilterBankAlgorithm, FilterBankParams, GemmStrategy, GemmTiles, MatMul, MatrixPower, NormN, NormOrder, Pad,
    Permute, Pipeline, Process, Result, Transpose, TransposeTiles, XData,
};
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
        #[command(flatten)]
        timing: Timing,
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
        #[command(flatten)]
        timing: Timing,
    },
    /// C = A·B for row-major M × K and K × N matrices (CLBlast's xGEMM, cuBLAS through torch's `a @ b`).
    Matmul {
        /// Rows of A and C.
        #[arg(long, default_value_t = 4096)]
        m: usize,
        /// Columns of B and C (default: M).
        #[arg(long)]
        n: Option<usize>,
        /// Columns of A, rows of B (default: M).
        #[arg(long)]
        k: Option<usize>,
        /// Products in the batch.
        #[arg(long, default_value_t = 1)]
        batch: usize,
        /// Element type.
        #[arg(long, value_enum, default_value = "f32")]
        dtype: Dtype,
        /// Kernels to try: `auto` (the planner), `direct`, or tiles `MWGxNWGxKWG/MDIMCxNDIMC` (like 128x128x16/16x16).
        #[arg(long, value_delimiter = ',', default_value = "auto")]
        kernels: Vec<String>,
        /// Launches per timed batch.
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Timed batches (the median is reported).
        #[arg(long, default_value_t = 3)]
        batches: usize,
        /// Compare 64 sampled outputs with float64 host dot products.
        #[arg(long)]
        check: bool,
    },
    /// A^n of a size × size matrix (torch.linalg.matrix_power).
    Power {
        /// Matrix size.
        #[arg(long, default_value_t = 4096)]
        size: usize,
        /// Exponent.
        #[arg(long, default_value_t = 100)]
        exponent: u64,
        /// Element type.
        #[arg(long, value_enum, default_value = "f32")]
        dtype: Dtype,
        /// Launches per timed batch.
        #[arg(long, default_value_t = 3)]
        reps: usize,
        /// Timed batches (the median is reported).
        #[arg(long, default_value_t = 3)]
        batches: usize,
    },
    /// ‖x‖_p of a vector (CLBlast's xNRM2 for p = 2, torch.linalg.vector_norm).
    Norm {
        /// Elements.
        #[arg(long, default_value_t = 1 << 28)]
        len: usize,
        /// The order p (≥ 1), or `inf`.
        #[arg(long, default_value = "2")]
        p: String,
        /// Element type.
        #[arg(long, value_enum, default_value = "f32")]
        dtype: Dtype,
        #[command(flatten)]
        timing: Timing,
    },
    /// Σ xᵢ·yᵢ of two vectors (CLBlast's xDOT, torch.dot / torch.vdot).
    Dot {
        /// Elements.
        #[arg(long, default_value_t = 1 << 28)]
        len: usize,
        /// Element type.
        #[arg(long, value_enum, default_value = "f32")]
        dtype: Dtype,
        /// Conjugate x (dotc / vdot).
        #[arg(long)]
        conjugate: bool,
        #[command(flatten)]
        timing: Timing,
    },
    /// numpy.pad / torch F.pad of an f32 image by the same width on every side.
    Pad {
        /// Input shape, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "8192,8192")]
        shape: Vec<usize>,
        /// Width added on each side of each axis.
        #[arg(long, default_value_t = 8)]
        width: usize,
        /// numpy.pad mode: constant, edge, reflect, symmetric, wrap.
        #[arg(long, default_value = "constant")]
        border: String,
        #[command(flatten)]
        timing: Timing,
    },
    /// Same-size convolution of an f32 image or volume with a random filter (cuDNN conv2d/conv3d with padding
    /// k/2, scipy/CuPy ndimage.convolve).
    Conv {
        /// Input shape, comma-separated (leading axes beyond the filter's rank are a batch).
        #[arg(long, value_delimiter = ',', default_value = "8192,8192")]
        shape: Vec<usize>,
        /// Filter shape, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "3,3")]
        filter: Vec<usize>,
        /// A Gaussian of this sigma instead of a random filter (rank-1: separable passes).
        #[arg(long)]
        gaussian: Option<f64>,
        /// scipy.ndimage mode: constant, nearest, reflect, mirror, wrap.
        #[arg(long, default_value = "constant")]
        border: String,
        /// Algorithms to try: auto, direct, tiled, separable.
        #[arg(long, value_delimiter = ',', default_value = "auto")]
        algorithms: Vec<String>,
        /// Launches per timed batch.
        #[arg(long, default_value_t = 10)]
        reps: usize,
        /// Timed batches (the median is reported).
        #[arg(long, default_value_t = 5)]
        batches: usize,
    },
    /// Multi-channel filter bank (cuDNN convolution forward, torch F.conv2d): [N,C,H,W] x [K,C,R,S].
    Filterbank {
        /// Input [N, C, H, W].
        #[arg(long, value_delimiter = ',', default_value = "10,4,128,128")]
        input: Vec<usize>,
        /// Filters [K, C, R, S].
        #[arg(long, value_delimiter = ',', default_value = "10,4,16,16")]
        filters: Vec<usize>,
        /// Padding (rows, columns).
        #[arg(long, value_delimiter = ',', default_value = "0,0")]
        padding: Vec<usize>,
        /// Algorithms to try: auto, direct, im2col.
        #[arg(long, value_delimiter = ',', default_value = "auto,direct,im2col")]
        algorithms: Vec<String>,
        /// Launches per timed batch.
        #[arg(long, default_value_t = 10)]
        reps: usize,
        /// Timed batches (the median is reported).
        #[arg(long, default_value_t = 5)]
        batches: usize,
    },
}

/// Runs `$f::<T>(args…)` for the element type named by a `Dtype`.
macro_rules! for_dtype {
    ($dtype:expr, $f:ident($($arg:expr),*)) => {
        match $dtype {
            Dtype::F32 => $f::<f32>($($arg),*),
            Dtype::F64 => $f::<f64>($($arg),*),
            Dtype::C32 => $f::<Complex32>($($arg),*),
            Dtype::C64 => $f::<Complex64>($($arg),*),
        }
    };
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
        Case::Permute { shape, axes, timing } => permute(&app, &shape, &axes, timing),
        Case::Transpose { rows, cols, batch, dtype, timing, tiles, check } => {
            let cols = cols.unwrap_or(rows);
            let tiles: Vec<Option<TransposeTiles>> = if tiles.is_empty() {
                vec![None]
            } else {
                tiles.iter().map(|t| parse_tiles(t).map(Some)).collect::<Result<_>>()?
            };
            let shape = [batch, rows, cols];
            for_dtype!(dtype, transpose(&app, shape, &tiles, timing, check))
        }
        Case::Matmul { m, n, k, batch, dtype, kernels, reps, batches, check } => {
            let strategies = kernels.iter().map(|k| parse_gemm_kernel(k)).collect::<Result<Vec<_>>>()?;
            let mnk = [m, n.unwrap_or(m), k.unwrap_or(m)];
            for_dtype!(dtype, matmul(&app, mnk, batch, &strategies, Timing { reps, batches }, check))
        }
        Case::Power { size, exponent, dtype, reps, batches } => {
            for_dtype!(dtype, power(&app, size, exponent, Timing { reps, batches }))
        }
        Case::Norm { len, p, dtype, timing } => {
            let order = if p.eq_ignore_ascii_case("inf") {
                NormOrder::Inf
            } else {
                NormOrder::P(p.parse().map_err(|_| {
                    cliper::Error::invalid("cliper-bench", format!("--p {p}: expected a number or `inf`"))
                })?)
            };
            for_dtype!(dtype, norm(&app, len, order, timing))
        }
        Case::Dot { len, dtype, conjugate, timing } => {
            for_dtype!(dtype, dot(&app, len, conjugate, timing))
        }
        Case::Pad { shape, width, border, timing } => pad(&app, &shape, width, Border::numpy(&border)?, timing),
        Case::Conv { shape, filter, gaussian, border, algorithms, reps, batches } => {
            conv(&app, &shape, &filter, gaussian, Border::scipy(&border)?, &algorithms, Timing { reps, batches })
        }
        Case::Filterbank { input, filters, padding, algorithms, reps, batches } => {
            filter_bank(&app, &input, &filters, &padding, &algorithms, Timing { reps, batches })
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

/// How a case is timed: `--reps` and `--batches`, flattened into the cases that use these defaults (the
/// heavier cases keep their own, smaller ones).
#[derive(Args, Clone, Copy)]
struct Timing {
    /// Launches per timed batch.
    #[arg(long, default_value_t = 20)]
    reps: usize,
    /// Timed batches (the median is reported).
    #[arg(long, default_value_t = 5)]
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

/// `auto` → the planner (None), `direct`, or `MWGxNWGxKWG/MDIMCxNDIMC`.
fn parse_gemm_kernel(text: &str) -> Result<Option<GemmStrategy>> {
    let bad = || {
        cliper::Error::invalid(
            "cliper-bench",
            format!("kernel `{text}` is not `auto`, `direct` or MWGxNWGxKWG/MDIMCxNDIMC (like 128x128x16/16x16)"),
        )
    };
    match text {
        "auto" => return Ok(None),
        "direct" => return Ok(Some(GemmStrategy::Direct)),
        _ => {}
    }
    let (blocked, text) = match text.strip_prefix("blocked:") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (tile, threads) = text.split_once('/').ok_or_else(bad)?;
    let numbers =
        |s: &str| s.split('x').map(|v| v.trim().parse::<usize>().map_err(|_| bad())).collect::<Result<Vec<_>>>();
    match (numbers(tile)?.as_slice(), numbers(threads)?.as_slice()) {
        (&[mwg, nwg, kwg], &[mdimc, ndimc]) => {
            let tiles = GemmTiles { mwg, nwg, kwg, mdimc, ndimc };
            Ok(Some(if blocked { GemmStrategy::Blocked(tiles) } else { GemmStrategy::Tiled(tiles) }))
        }
        _ => Err(bad()),
    }
}

fn matmul<T: Element>(
    app: &ClApp,
    [m, n, k]: [usize; 3],
    batch: usize,
    strategies: &[Option<GemmStrategy>],
    timing: Timing,
    check: bool,
) -> Result<()> {
    let (a_shape, b_shape, c_shape) = ([batch, m, k], [batch, k, n], [batch, m, n]);
    let ha = random_data::<T>(batch * m * k);
    let hb: Vec<T> = random_data::<T>(batch * k * n + 7)[7..].to_vec();
    let a = XData::from_slice(app, &a_shape, &ha)?;
    let b = XData::from_slice(app, &b_shape, &hb)?;
    let c = XData::<T>::zeros(app, &c_shape)?;
    let flops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (batch * m * n * k) as f64;
    let size = if batch == 1 { format!("{m}x{n}x{k}") } else { format!("{batch}x{m}x{n}x{k}") };
    for &strategy in strategies {
        let mut product = MatMul::new(&a, &b, &c);
        if let Some(s) = strategy {
            product = product.with_strategy(s);
        }
        let mut pipeline = Pipeline::new(app).then(product);
        let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
        let chosen = strategy.unwrap_or_else(|| GemmStrategy::for_problem::<T>(app.device(), m, n, k, batch));
        let shown = match chosen {
            GemmStrategy::Direct => "direct".to_string(),
            GemmStrategy::Tiled(t) => format!("{}x{}x{}/{}x{}", t.mwg, t.nwg, t.kwg, t.mdimc, t.ndimc),
            GemmStrategy::Blocked(t) => format!("blocked:{}x{}/{}x{}", t.mwg, t.nwg, t.mdimc, t.ndimc),
        };
        println!(
            "cliper  matmul    {:<4} {:<16} {:>9.4} ms {:>8.1} GFLOP/s   events {:>9.4} ms {:>8.1} GFLOP/s   kernel {}",
            T::NAME,
            size,
            wall,
            flops / wall / 1e6,
            events,
            flops / events / 1e6,
            shown
        );
        if check {
            let got = c.to_vec()?;
            let mut worst = 0.0f64;
            for s in 0..64 {
                let (q, i, j) = ((s * 7) % batch, (s * 7919) % m, (s * 104_729) % n);
                let (mut want, mut mag) = (Complex64::new(0.0, 0.0), 0.0);
                for l in 0..k {
                    let (x, y) = (ha[(q * m + i) * k + l].to_c64(), hb[(q * k + l) * n + j].to_c64());
                    want += x * y;
                    mag += x.norm() * y.norm();
                }
                worst = worst.max((got[(q * m + i) * n + j].to_c64() - want).norm() / mag);
            }
            let eps = if T::IS_DOUBLE { f64::EPSILON } else { f32::EPSILON as f64 };
            println!("check: worst |Δ|/(|A||B|) over 64 samples {worst:.2e} (K·ε = {:.2e})", k as f64 * eps);
            if worst > k as f64 * eps * 4.0 {
                return Err(cliper::Error::invalid("cliper-bench", "the product is wrong"));
            }
        }
    }
    Ok(())
}

fn power<T: Element>(app: &ClApp, size: usize, exponent: u64, timing: Timing) -> Result<()> {
    // Entries in [-1, 1)/size keep the powers from overflowing.
    let host: Vec<T> =
        random_data::<T>(size * size).into_iter().map(|v| T::from_c64(v.to_c64() / size as f64)).collect();
    let a = XData::from_slice(app, &[size, size], &host)?;
    let out = XData::<T>::zeros(app, &[size, size])?;
    let mut pipeline = Pipeline::new(app).then(MatrixPower::new(&a, &out, exponent));
    let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
    let products = (63 - exponent.leading_zeros() + exponent.count_ones()).saturating_sub(1) as f64;
    let flops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (size as f64).powi(3) * products;
    println!(
        "cliper  power {exponent:<4} {:<4} {:<14} {:>9.4} ms {:>8.1} GFLOP/s   events {:>9.4} ms   {products} products",
        T::NAME,
        size,
        wall,
        flops / wall / 1e6,
        events
    );
    Ok(())
}

fn norm<T: Element>(app: &ClApp, len: usize, order: NormOrder, timing: Timing) -> Result<()> {
    let x = XData::from_slice(app, &[len], &random_data::<T>(len))?;
    let out = XData::<T::Real>::zeros(app, &[])?;
    let mut process = NormN::new(&x, &out, order);
    cliper::Process::init(&mut process)?;
    let strategy = process.strategy().unwrap_or_default();
    let mut pipeline = Pipeline::new(app).then(process);
    let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
    let bytes = (len * std::mem::size_of::<T>()) as f64;
    let p = match order {
        NormOrder::Inf => "inf".to_string(),
        NormOrder::P(p) => p.to_string(),
    };
    println!(
        "cliper  norm p={p:<5} {:<4} {:<12} {:>9.4} ms {:>8.1} GB/s   events {:>9.4} ms {:>8.1} GB/s   {strategy}",
        T::NAME,
        len,
        wall,
        bytes / wall / 1e6,
        events,
        bytes / events / 1e6
    );
    Ok(())
}

fn dot<T: Element>(app: &ClApp, len: usize, conjugate: bool, timing: Timing) -> Result<()> {
    let x = XData::from_slice(app, &[len], &random_data::<T>(len))?;
    let y = XData::from_slice(app, &[len], &random_data::<T>(len + 3)[3..])?;
    let out = XData::<T>::zeros(app, &[])?;
    let kind = if conjugate { DotKind::Conjugated } else { DotKind::Plain };
    let mut pipeline = Pipeline::new(app).then(Dot::new(&x, &y, &out).kind(kind));
    let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
    let bytes = 2.0 * (len * std::mem::size_of::<T>()) as f64;
    println!(
        "cliper  dot{:<6} {:<4} {:<14} {:>9.4} ms {:>8.1} GB/s   events {:>9.4} ms {:>8.1} GB/s",
        if conjugate { "c" } else { "" },
        T::NAME,
        len,
        wall,
        bytes / wall / 1e6,
        events,
        bytes / events / 1e6
    );
    Ok(())
}

fn pad(app: &ClApp, shape: &[usize], width: usize, border: Border, timing: Timing) -> Result<()> {
    let n: usize = shape.iter().product();
    let x = XData::from_slice(app, shape, &random_data::<f32>(n))?;
    let out_shape = Pad::<f32>::output_shape(shape, &[(width, width)])?;
    let out = XData::<f32>::zeros(app, &out_shape)?;
    let mut pipeline = Pipeline::new(app).then(Pad::new(&x, &out, &[(width, width)], border));
    let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
    let bytes = ((n + out.len()) * 4) as f64;
    println!(
        "cliper  pad {width} {border:<22?} {:<14} {:>9.4} ms {:>8.1} GB/s   events {:>9.4} ms {:>8.1} GB/s",
        shape_text(shape),
        wall,
        bytes / wall / 1e6,
        events,
        bytes / events / 1e6
    );
    Ok(())
}

fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("x")
}

fn conv(
    app: &ClApp,
    shape: &[usize],
    filter_shape: &[usize],
    gaussian: Option<f64>,
    border: Border,
    algorithms: &[String],
    timing: Timing,
) -> Result<()> {
    let n: usize = shape.iter().product();
    let x = XData::from_slice(app, shape, &random_data::<f32>(n))?;
    let filter = match gaussian {
        Some(sigma) => Filter::<f32>::gaussian(sigma, filter_shape.len())?,
        None => Filter::new(filter_shape, random_data::<f32>(filter_shape.iter().product()))?,
    };
    let out = XData::<f32>::zeros(app, shape)?;
    for name in algorithms {
        let algorithm = match name.as_str() {
            "auto" => ConvAlgorithm::Auto,
            "direct" => ConvAlgorithm::Direct,
            "tiled" => ConvAlgorithm::Tiled,
            "separable" => ConvAlgorithm::Separable,
            other => return Err(cliper::Error::invalid("cliper-bench", format!("unknown algorithm `{other}`"))),
        };
        let mut process = Convolution::new(&x, &out, &filter, ConvParams::new().border(border).algorithm(algorithm));
        process.init()?;
        let strategy = process.strategy();
        let mut pipeline = Pipeline::new(app).then(process);
        let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
        let bytes = 2.0 * (n * 4) as f64;
        let flops = 2.0 * (n * filter.values().len()) as f64;
        println!(
            "cliper  conv {:<8} {border:<18?} {:<16} {:>9.4} ms {:>8.1} GB/s {:>8.1} GFLOP/s   events {:>9.4} ms   {name}: {strategy:?}",
            shape_text(filter.shape()),
            shape_text(shape),
            wall,
            bytes / wall / 1e6,
            flops / wall / 1e6,
            events
        );
    }
    Ok(())
}

fn filter_bank(
    app: &ClApp,
    input: &[usize],
    filters: &[usize],
    padding: &[usize],
    algorithms: &[String],
    timing: Timing,
) -> Result<()> {
    let x = XData::from_slice(app, input, &random_data::<f32>(input.iter().product()))?;
    let f = XData::from_slice(app, filters, &random_data::<f32>(filters.iter().product()))?;
    let pad = [padding.first().copied().unwrap_or(0), padding.get(1).copied().unwrap_or(0)];
    for name in algorithms {
        let algorithm = match name.as_str() {
            "auto" => FilterBankAlgorithm::Auto,
            "direct" => FilterBankAlgorithm::Direct,
            "im2col" => FilterBankAlgorithm::Im2col,
            other => return Err(cliper::Error::invalid("cliper-bench", format!("unknown algorithm `{other}`"))),
        };
        let params = FilterBankParams::new().padding(pad).algorithm(algorithm);
        let y = XData::<f32>::zeros(app, &params.output_shape(input, filters)?)?;
        let mut process = FilterBank::new(&x, &f, &y, params);
        process.init()?;
        let strategy = process.strategy();
        let mut pipeline = Pipeline::new(app).then(process);
        let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
        let flops = 2.0 * (y.len() * filters[1..].iter().product::<usize>()) as f64;
        println!(
            "cliper  filterbank {} * {} {:>9.4} ms {:>8.1} GFLOP/s   events {:>9.4} ms   {name}: {strategy:?}",
            shape_text(input),
            shape_text(filters),
            wall,
            flops / wall / 1e6,
            events
        );
    }
    Ok(())
}
