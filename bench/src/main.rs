//! `cliper-bench`: times cliper's processes the way the peer benchmarks time theirs, so the numbers can be put
//! side by side (`docs/benchmarks.md`).
//!
//! - `suite` runs every process on the fixed cases of the performance report (stable ids, JSON records,
//!   output checks); `report` sets a suite's JSON beside the peers' output of the same call (Markdown table
//!   with ratios and goals, SVG plots).
//! - The sweeps (`transpose`, `matmul`, `conv`, …) time one process on chosen sizes and kernels and print one
//!   line each: `cliper <op> <size> <ms> ms <GB/s> GB/s ...`, where ms is the median over several batches of
//!   the wall-clock time of `reps` back-to-back launches followed by one `finish` (the method of
//!   `clblast_bench`), and `events` is the median device time from profiling events.

// No panics: a failed case is a typed error in the report (tests may unwrap).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]

mod batch;
mod case;
mod fft_cases;
mod measure;
mod mri;
mod ndimage_cases;
mod nufft;
mod peers;
mod plot;
mod report;
mod scaling;
mod suite;
mod sweep;
mod tiles;
mod tune;

use clap::{Parser, Subcommand, ValueEnum};
use cliper::Result;
use cliper::prelude::*;
use measure::Timing;
use num_complex::{Complex32, Complex64};
use std::path::PathBuf;
use sweep::{parse_gemm_kernel, parse_tiles};

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
    /// Every process on the report's fixed cases (ids like `sgemm_4096`, `conv3_8192`): a table, and JSON
    /// records with `--json`.
    Suite {
        /// Smaller sizes (same ids, marked `quick: true`), for CPUs like PoCL's.
        #[arg(long)]
        quick: bool,
        /// Write the records here as a JSON list.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Run only the cases whose ids start with one of these (comma-separated); the copy ceiling always runs.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Peak single-precision GFLOP/s for the percentages (default: estimated from device info).
        #[arg(long)]
        peak_gflops: Option<f64>,
        /// Peak double-precision GFLOP/s (default: estimated, or half of --peak-gflops).
        #[arg(long)]
        peak_gflops_f64: Option<f64>,
        /// Host time to spend timing each case, in ms (the run counts adapt to it; at least 3 runs).
        #[arg(long, default_value_t = 2000.0)]
        budget_ms: f64,
        /// List the case ids and stop.
        #[arg(long)]
        list: bool,
    },
    /// Folders of files end to end (issue 45): `cliper run` on CT volumes, PNGs and DICOM series against nibabel +
    /// scipy in one process and in a pool of every core, CuPy on a GPU, and the copy limit (reading and writing the
    /// same bytes once); outputs checked against scipy's, peak memory against the host budget.
    Batch(batch::BatchArgs),
    /// Sets a suite's JSON beside peer output measured in the same call: a Markdown table with ratios and the
    /// goals met or not, and SVG plots.
    Report {
        /// The suite's JSON records.
        ours: PathBuf,
        /// Peer output files (lines `peer op size ms …` from clblast_bench, peer_torch.py, peer_numpy.py, …).
        #[arg(long, num_args = 1..)]
        peers: Vec<PathBuf>,
        /// Write the Markdown here (default: stdout).
        #[arg(long)]
        markdown: Option<PathBuf>,
        /// Write the SVG plots into this folder.
        #[arg(long)]
        plots: Option<PathBuf>,
    },
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
        /// Precision of f32 products: full, fp32-split or tf32 (the last two may use TF32 tensor cores).
        #[arg(long, default_value = "full")]
        precision: GemmPrecision,
        /// Print each kernel's time and bandwidth (the packing of the wgmma kernel apart from its product).
        #[arg(long)]
        profile: bool,
        /// Write the product's program binary (PTX on NVIDIA) to this file, for reading.
        #[arg(long)]
        dump_binary: Option<PathBuf>,
    },
    /// Searches GEMM tiles for this device and writes a GEMM table (TOML) for `CLIPER_GEMM_TABLE` or the
    /// built-in table (docs/gemm-tuning.md).
    Tune {
        /// Element types to tune (comma-separated).
        #[arg(long, value_delimiter = ',', default_value = "f32,c32,f64,c64")]
        types: Vec<String>,
        /// Matrix sizes of the timed products, one table entry per type and size (default 4096 on GPUs, 512 on
        /// CPUs).
        #[arg(long, value_delimiter = ',')]
        sizes: Vec<usize>,
        /// Seconds of search per type (the final re-timing and check come on top).
        #[arg(long, default_value_t = 60.0)]
        budget_s: f64,
        /// Write the table here (default: print it).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write each winner's program binary (PTX on NVIDIA) into this directory.
        #[arg(long)]
        binaries: Option<PathBuf>,
        /// Seed of the candidates' random order.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Kernels to time first, after the current entry (comma-separated; those not valid for a type are
        /// skipped for it).
        #[arg(long, value_delimiter = ',')]
        first: Vec<String>,
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
        /// Precision of f32 products: full, fp32-split or tf32.
        #[arg(long, default_value = "full")]
        precision: GemmPrecision,
        /// Entries are uniform in [0, scale/size) (1: as torch.rand(…)/size in the peer, A^100 near 2⁻¹⁰⁰;
        /// 2: the Perron root near 1, A^100 of order 1/size).
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
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
        /// Algorithms to try: auto, direct, tiled, blocked, separable, separable-fused, fft; `NAME:kernels` runs
        /// NAME with ConvParams::kernels_only (CPU devices: no passes on the host's threads).
        #[arg(long, value_delimiter = ',', default_value = "auto")]
        algorithms: Vec<String>,
        /// Launches per timed batch.
        #[arg(long, default_value_t = 10)]
        reps: usize,
        /// Timed batches (the median is reported).
        #[arg(long, default_value_t = 5)]
        batches: usize,
    },
    /// Complex FFT over chosen axes (torch.fft.fftn), each algorithm in turn.
    Fft {
        /// Shape, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "8192,8192")]
        shape: Vec<usize>,
        /// Axes to transform (default: all).
        #[arg(long, value_delimiter = ',')]
        axes: Vec<usize>,
        /// c32 or c64.
        #[arg(long, value_enum, default_value = "c32")]
        dtype: Dtype,
        /// Algorithms to try: auto, local, global.
        #[arg(long, value_delimiter = ',', default_value = "auto,local,global")]
        algorithms: Vec<String>,
        /// Print every kernel's device time too.
        #[arg(long)]
        profile: bool,
        #[command(flatten)]
        timing: Timing,
    },
    /// An iterative MRI reconstruction timed after a warm-up (CG-SENSE, ℓ1-wavelet, TV), to set beside `bart pics`.
    Recon {
        /// k-space, BART CFL (maps beside it as NAME_sens, or --maps).
        kspace: PathBuf,
        /// Sensitivity maps file.
        #[arg(long)]
        maps: Option<PathBuf>,
        /// cg, l1 or tv.
        #[arg(long, default_value = "cg")]
        method: String,
        #[arg(long, default_value_t = 0.01)]
        lambda: f64,
        #[arg(long, default_value_t = 30)]
        iters: usize,
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Save the image (BART CFL).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Type 1 and type 2 NUFFTs of the points in an NPY file (`[points, axes]`, cycles per FOV; made and timed with
    /// FINUFFT/SigPy by scripts/bench/peer_nufft.py), timed after a warm-up.
    Nufft {
        /// The points file.
        points: PathBuf,
        /// The image shape.
        #[arg(long, value_delimiter = ',', default_value = "256,256")]
        shape: Vec<usize>,
        #[arg(long, default_value_t = 1e-6)]
        tolerance: f64,
        /// The fine grid's upsampling (2, 1.25; default: chosen per plan).
        #[arg(long)]
        upsampling: Option<f64>,
        /// c64 or c128.
        #[arg(long, default_value = "c128")]
        dtype: String,
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Print every kernel's device time of one run of each.
        #[arg(long)]
        profile: bool,
    },
    /// SENSE with a trajectory (BART's layouts, as `bart pics -t TRAJ -w 1` with -l2, -l1 -e or -R T), timed after a
    /// warm-up; with --dcf also the Pipe–Menon weights of the trajectory (host).
    ReconTraj {
        /// k-space [1, samples, spokes, coils] (BART CFL).
        kspace: PathBuf,
        /// The trajectory [3, samples, spokes].
        #[arg(long)]
        traj: PathBuf,
        /// Maps [x, y, z, coils].
        #[arg(long)]
        maps: PathBuf,
        #[arg(long, default_value_t = 0.01)]
        lambda: f64,
        #[arg(long, default_value_t = 30)]
        iters: usize,
        /// l2 (CG, pics -l2), l1 (FISTA on wavelets, step by the eigenvalue: pics -l1 -e) or tv (ADMM, pics -R T).
        #[arg(long, default_value = "l2")]
        penalty: String,
        /// Also time the trajectory's Pipe–Menon density compensation (on the host).
        #[arg(long)]
        dcf: bool,
        #[arg(long, default_value_t = 5)]
        reps: usize,
        /// Save the image (BART CFL).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// A Gaussian → Sobel magnitude → threshold chain on an NPY image larger than a device memory budget, in
    /// tiles, against copying the same bytes to the device and back once (docs/tiling.md).
    Tiles {
        /// Rows and columns of the f32 image (made once in --dir).
        #[arg(long, value_delimiter = ',', default_value = "16384,16384")]
        shape: Vec<usize>,
        /// Device memory budget (`8G`, `512M`, bytes); the whole device's memory is the second run's.
        #[arg(long)]
        budget: Option<String>,
        /// Where the input and output files go.
        #[arg(long, default_value = "target/tiles-bench")]
        dir: std::path::PathBuf,
        /// The Gaussian's sigma.
        #[arg(long, default_value_t = 2.0)]
        sigma: f64,
        /// The output file's element type (`f32` writes 4 bytes per pixel); by default the threshold's mask is
        /// written as uint8, as an untiled run writes it.
        #[arg(long)]
        output_type: Option<String>,
        /// Skip the second run, with the whole device's memory as the budget.
        #[arg(long)]
        budget_only: bool,
    },
    /// The first device of a set against all of them (docs/scaling.md): slices through pad → Gaussian → Sobel,
    /// SENSE reconstructions, a 4-D array cut along its batch axis, and optionally a tiled image.
    Scaling {
        /// The device set (all, gpu:*, a list of P:D).
        #[arg(long, default_value = "gpu:*")]
        devices: String,
        /// Slices in the batch and their size (square).
        #[arg(long, default_value_t = 512)]
        slices: usize,
        #[arg(long, default_value_t = 2048)]
        size: usize,
        /// Reconstructions in the batch, their coils and size (square).
        #[arg(long, default_value_t = 64)]
        recons: usize,
        #[arg(long, default_value_t = 8)]
        coils: usize,
        #[arg(long, default_value_t = 512)]
        recon_size: usize,
        /// A tiled run on an f32 NPY image of this many rows,cols (made once in --dir) ...
        #[arg(long, value_delimiter = ',')]
        tiles_shape: Vec<usize>,
        /// ... under this device memory budget per device (`8G`).
        #[arg(long, default_value = "8G")]
        tiles_budget: String,
        /// Where the tiled run's files go.
        #[arg(long, default_value = "target/scaling-bench")]
        dir: std::path::PathBuf,
    },
    /// Multi-channel filter bank (cuDNN convolution forward, torch F.conv2d): `[N,C,H,W]` x `[K,C,R,S]`.
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
        /// Algorithms to try: auto, direct, blocked, im2col, implicit, winograd (F(2×2, 3×3)), winograd4x4 (F(4×4, 3×3)).
        #[arg(long, value_delimiter = ',', default_value = "auto,direct,im2col,implicit")]
        algorithms: Vec<String>,
        /// Precision of the im2col product: full, fp32-split or tf32.
        #[arg(long, default_value = "full")]
        precision: GemmPrecision,
        /// Tiles to try for the implicit GEMM and Winograd's products (`MWGxNWGxKWG/MDIMCxNDIMC/VWMxVWN`), each as its own line.
        #[arg(long, value_delimiter = ',')]
        tiles: Vec<String>,
        /// Print every kernel's device time too.
        #[arg(long)]
        profile: bool,
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
    ($dtype:expr, $($f:ident)::+($($arg:expr),*)) => {
        match $dtype {
            Dtype::F32 => $($f)::+::<f32>($($arg),*),
            Dtype::F64 => $($f)::+::<f64>($($arg),*),
            Dtype::C32 => $($f)::+::<Complex32>($($arg),*),
            Dtype::C64 => $($f)::+::<Complex64>($($arg),*),
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

/// Runs the suite, writes its records, and fails naming every wrong result and every case that failed.
fn run_suite(app: &ClApp, options: suite::SuiteOptions) -> Result<()> {
    let (records, failed) = suite::run(app, &options)?;
    if let Some(path) = &options.json {
        suite::write_json(path, &records)?;
        println!("wrote {} records to {}", records.len(), path.display());
    }
    let mut problems: Vec<String> = records
        .iter()
        .filter(|r| r.correct() == Some(false))
        .map(|r| {
            format!(
                "{}: wrong result (error {:.2e} > {:.2e})",
                r.case,
                r.max_error.unwrap_or(0.0),
                r.tolerance.unwrap_or(0.0)
            )
        })
        .collect();
    problems.extend(failed.iter().map(|(id, e)| format!("{id}: {e}")));
    if problems.is_empty() { Ok(()) } else { Err(cliper::Error::invalid("cliper-bench suite", problems.join("; "))) }
}

fn run(cli: Cli) -> Result<()> {
    match cli.case {
        Case::Suite { list: true, .. } => {
            println!("{}", suite::case_ids().join("\n"));
            return Ok(());
        }
        Case::Report { ours, peers, markdown, plots } => {
            return report::run(&ours, &peers, markdown.as_deref(), plots.as_deref());
        }
        // Times other processes; it opens the device only to name it.
        Case::Batch(args) => return batch::run(&args),
        _ => {}
    }
    let app = ClApp::builder().use_env(true).profiling(true).build()?;
    println!("device: {} ({}, {})", app.device().name, app.device().platform_name, app.device().version);
    match cli.case {
        Case::Permute { shape, axes, timing } => sweep::permute(&app, &shape, &axes, timing),
        Case::Transpose { rows, cols, batch, dtype, timing, tiles, check } => {
            let cols = cols.unwrap_or(rows);
            let tiles: Vec<Option<TransposeTiles>> = if tiles.is_empty() {
                vec![None]
            } else {
                tiles.iter().map(|t| parse_tiles(t).map(Some)).collect::<Result<_>>()?
            };
            let shape = [batch, rows, cols];
            for_dtype!(dtype, sweep::transpose(&app, shape, &tiles, timing, check))
        }
        Case::Matmul { m, n, k, batch, dtype, kernels, reps, batches, check, precision, profile, dump_binary } => {
            let strategies = kernels.iter().map(|k| parse_gemm_kernel(k)).collect::<Result<Vec<_>>>()?;
            let mnk = [m, n.unwrap_or(m), k.unwrap_or(m)];
            let timing = Timing { reps, batches };
            let report = sweep::Report { check, profile, binary: dump_binary };
            for_dtype!(dtype, sweep::matmul(&app, mnk, batch, &strategies, precision, timing, &report))
        }
        Case::Tune { types, sizes, budget_s, out, binaries, seed, first } => {
            let first = first.iter().map(|k| k.parse()).collect::<Result<Vec<_>>>()?;
            let ptx_dir = binaries.as_deref();
            tune::run(
                &app,
                &tune::TuneArgs {
                    types: &types,
                    sizes: &sizes,
                    budget_s,
                    out: out.as_deref(),
                    ptx_dir,
                    seed,
                    first: &first,
                },
            )
        }
        Case::Power { size, exponent, dtype, precision, scale, reps, batches } => {
            for_dtype!(dtype, sweep::power(&app, size, exponent, precision, scale, Timing { reps, batches }))
        }
        Case::Norm { len, p, dtype, timing } => {
            let order = if p.eq_ignore_ascii_case("inf") {
                NormOrder::Inf
            } else {
                NormOrder::P(p.parse().map_err(|_| {
                    cliper::Error::invalid("cliper-bench", format!("--p {p}: expected a number or `inf`"))
                })?)
            };
            for_dtype!(dtype, sweep::norm(&app, len, order, timing))
        }
        Case::Dot { len, dtype, conjugate, timing } => {
            for_dtype!(dtype, sweep::dot(&app, len, conjugate, timing))
        }
        Case::Pad { shape, width, border, timing } => sweep::pad(&app, &shape, width, Border::numpy(&border)?, timing),
        Case::Conv { shape, filter, gaussian, border, algorithms, reps, batches } => {
            sweep::conv(&app, &shape, &filter, gaussian, Border::scipy(&border)?, &algorithms, Timing { reps, batches })
        }
        Case::Scaling { devices, slices, size, recons, coils, recon_size, tiles_shape, tiles_budget, dir } => {
            let tiles = match tiles_shape[..] {
                [] => None,
                [rows, cols] => Some(([rows, cols], cliper::parse_bytes(&tiles_budget)?)),
                _ => return Err(cliper::Error::invalid("cliper-bench", "--tiles-shape: give rows,cols")),
            };
            scaling::run(&scaling::Scaling { devices, slices, size, recons, coils, recon_size, tiles, dir })
        }
        Case::Recon { kspace, maps, method, lambda, iters, reps, out } => {
            mri::run(&app, &kspace, maps.as_deref(), &method, lambda, iters, reps, out.as_deref())
        }
        Case::Nufft { points, shape, tolerance, upsampling, dtype, reps, profile } => match dtype.as_str() {
            "c64" => nufft::run::<Complex32>(&app, &points, &shape, tolerance, upsampling, reps, profile),
            "c128" => nufft::run::<Complex64>(&app, &points, &shape, tolerance, upsampling, reps, profile),
            other => Err(cliper::Error::invalid("cliper-bench nufft", format!("--dtype {other}: give c64 or c128"))),
        },
        Case::ReconTraj { kspace, traj, maps, lambda, iters, penalty, dcf, reps, out } => {
            let penalty = match penalty.as_str() {
                "l2" => cliper::SensePenalty::L2(cliper::CgParams::new(iters).lambda(lambda)),
                "l1" => cliper::SensePenalty::L1Wavelet(cliper::L1WaveletParams::new(lambda, iters).eigen_scaled(true)),
                "tv" => cliper::SensePenalty::Tv(cliper::TvParams::new(lambda, iters)),
                other => {
                    return Err(cliper::Error::invalid(
                        "cliper-bench recon-traj",
                        format!("--penalty {other}: l2, l1 or tv"),
                    ));
                }
            };
            nufft::recon(&app, &kspace, &traj, &maps, penalty, iters, dcf, reps, out.as_deref())
        }
        Case::Tiles { shape, budget, dir, sigma, output_type, budget_only } => {
            let [rows, cols] = shape[..] else {
                return Err(cliper::Error::invalid("cliper-bench", format!("--shape {shape:?}: give rows,cols")));
            };
            let budget = budget.as_deref().map(cliper::parse_bytes).transpose()?;
            let budgets = if budget_only { vec![budget] } else { vec![budget, None] };
            tiles::run([rows, cols], &budgets, &dir, sigma, output_type.as_deref())
        }
        Case::Filterbank { input, filters, padding, algorithms, precision, tiles, profile, reps, batches } => {
            let tiles = tiles.iter().map(|t| t.parse()).collect::<Result<Vec<GemmTiles>>>()?;
            let timing = Timing { reps, batches };
            sweep::filter_bank(&app, [&input, &filters, &padding], &algorithms, precision, &tiles, timing, profile)
        }
        Case::Fft { shape, axes, dtype, algorithms, profile, timing } => match dtype {
            Dtype::C64 => sweep::fft::<Complex64>(&app, &shape, &axes, &algorithms, timing, profile),
            _ => sweep::fft::<Complex32>(&app, &shape, &axes, &algorithms, timing, profile),
        },
        Case::Suite { quick, json, only, peak_gflops, peak_gflops_f64, budget_ms, .. } => {
            run_suite(&app, suite::SuiteOptions { quick, json, only, peak_gflops, peak_gflops_f64, budget_ms })
        }
        // Answered above.
        Case::Report { .. } | Case::Batch(_) => Ok(()),
    }
}
