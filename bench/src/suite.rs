//! `cliper-bench suite`: every process on a fixed list of cases with stable ids, measured one way, written as
//! a table and as JSON records that `cliper-bench report` sets beside the peers.
//!
//! Each case is timed by [`measure`]: device time from profiling events (every command of the process summed),
//! host wall time of `init` (first build in this run: compiles or cache), of one `launch` + `finish`, of the
//! enqueue alone, and back-to-back launches (the peers' method). Rates come from the median device time; the
//! copy ceiling (the better of `clEnqueueCopyBuffer` and a float4 copy kernel, same run) and the device's peak
//! FLOP/s set the percentages. After timing, each case checks its output against a float64 host computation
//! (sampled for the big ones) and records the error beside the tolerance.

use crate::case::{CaseFn, Check, Ctx, Outcome, samples, time_process, trailing, value_at, values_in};
use crate::measure::{measure, random_data, random_data_seeded, shape_text};
use cliper::Result;
use cliper::prelude::*;
use num_complex::{Complex32, Complex64};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Instant;

/// A case that failed to run: its id and the error.
pub(crate) type Failure = (String, cliper::Error);

/// Settings of one suite run.
pub(crate) struct SuiteOptions {
    pub(crate) quick: bool,
    pub(crate) json: Option<PathBuf>,
    pub(crate) only: Vec<String>,
    pub(crate) peak_gflops: Option<f64>,
    pub(crate) peak_gflops_f64: Option<f64>,
    pub(crate) budget_ms: f64,
}

/// One measured case, as written to the JSON file. Times in milliseconds; rates from the median device time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) case: String,
    pub(crate) device: String,
    pub(crate) driver: String,
    pub(crate) date: String,
    pub(crate) quick: bool,
    /// The problem size (`4096` for a 4096³ product, `8192x8192` for an image, `268435456` for a vector).
    pub(crate) size: String,
    pub(crate) dtype: String,
    /// Device time: median, min and max over the timed runs.
    pub(crate) median_ms: f64,
    pub(crate) min_ms: f64,
    pub(crate) max_ms: f64,
    /// Back-to-back launches with one wait at the end, per launch (how CLBlast's and torch's times are taken).
    pub(crate) stream_ms: f64,
    /// Median host wall time of one `launch` followed by `finish`.
    pub(crate) launch_ms: f64,
    /// Median host time inside `launch` (enqueueing only).
    pub(crate) enqueue_ms: f64,
    /// Host time of `init` (kernel builds, planning, scratch), the first in this run.
    pub(crate) init_ms: f64,
    pub(crate) gflops: Option<f64>,
    pub(crate) gbps: Option<f64>,
    /// Percent of the copy ceiling measured in the same run.
    pub(crate) pct_bandwidth: Option<f64>,
    /// Percent of the device's peak FLOP/s for the element type.
    pub(crate) pct_flops: Option<f64>,
    /// What the planner chose.
    pub(crate) algorithm: String,
    /// Device commands per launch.
    pub(crate) commands: usize,
    /// Timed runs.
    pub(crate) runs: usize,
    /// Largest error of the output against float64 host arithmetic (relative, as `check` describes), and the
    /// tolerance it must stay within.
    pub(crate) max_error: Option<f64>,
    pub(crate) tolerance: Option<f64>,
    pub(crate) check: Option<String>,
    /// chain10 only: back-to-back host time per process beyond its device time, in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) overhead_us_per_process: Option<f64>,
    /// chain10 only: host time inside `launch` per process (enqueueing), in µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) enqueue_us_per_process: Option<f64>,
}

impl Record {
    /// Whether the output check passed (`None` when the case has no check).
    pub(crate) fn correct(&self) -> Option<bool> {
        Some(self.max_error? <= self.tolerance?)
    }
}

/// The device's peak arithmetic rate in GFLOP/s for single and double precision, and where the figure came
/// from. NVIDIA data-centre GPUs since Volta: 64 (V100) or 128 FP32 lanes per SM with FMA at the maximum
/// clock; CPUs: per core two FMA units of 8 (AVX2) or 16 (AVX-512) lanes. Other devices: unknown unless given.
pub(crate) fn peak_gflops(info: &DeviceInfo) -> Option<(f64, f64, &'static str)> {
    let (cu, ghz) = (info.compute_units as f64, info.clock_mhz as f64 / 1e3);
    let name = info.name.to_lowercase();
    let vendor = info.vendor.to_lowercase();
    match info.kind {
        DeviceKind::Gpu if vendor.contains("nvidia") => {
            let lanes = if name.contains("v100") { 64.0 } else { 128.0 };
            let f32 = cu * lanes * 2.0 * ghz;
            // Data-centre parts do FP64 at half rate (A100 and V100 at half of 64 lanes); others at 1/64.
            let fp64_ratio = if ["h100", "h200", "h800", "gh200"].iter().any(|n| name.contains(n)) {
                0.5
            } else if name.contains("a100") || name.contains("v100") {
                if name.contains("a100") { 0.25 } else { 0.5 }
            } else {
                1.0 / 64.0
            };
            Some((f32, f32 * fp64_ratio, "estimate: FP32 lanes per SM × 2 (FMA) × max clock"))
        }
        DeviceKind::Cpu => {
            let lanes = if name.contains("avx512") { 16.0 } else { 8.0 };
            let f32 = cu * 2.0 * lanes * 2.0 * ghz;
            Some((f32, f32 / 2.0, "estimate: cores × 2 FMA units × SIMD lanes × 2 × clock"))
        }
        _ => None,
    }
}

/// The cases in run order: id, and the function that builds, times and checks it (returning size and dtype).
fn cases() -> Vec<(&'static str, CaseFn)> {
    let fixed: Vec<(&'static str, CaseFn)> = vec![
        ("sgemm_1024", |c| gemm::<f32>(c, if c.quick { 512 } else { 1024 })),
        ("sgemm_4096", |c| gemm::<f32>(c, if c.quick { 1024 } else { 4096 })),
        ("sgemm_8192", |c| gemm::<f32>(c, if c.quick { 2048 } else { 8192 })),
        // Sizes off every tile multiple: the edge tiles' guarded loads and stores (goal: within 10 % of 4096).
        ("sgemm_4095", |c| gemm::<f32>(c, if c.quick { 1023 } else { 4095 })),
        ("sgemm_4097", |c| gemm::<f32>(c, if c.quick { 1025 } else { 4097 })),
        ("cgemm_1024", |c| gemm::<Complex32>(c, if c.quick { 256 } else { 1024 })),
        ("cgemm_4096", |c| gemm::<Complex32>(c, if c.quick { 1024 } else { 4096 })),
        ("dgemm_4096", |c| gemm::<f64>(c, if c.quick { 1024 } else { 4096 })),
        ("zgemm_4096", |c| gemm::<Complex64>(c, if c.quick { 512 } else { 4096 })),
        ("matpow100_4096", |c| matrix_power(c, if c.quick { 512 } else { 4096 }, 100)),
        ("norm2_f32_2e28", |c| norm::<f32>(c, vector_len(c, 28), NormOrder::P(2.0))),
        ("normp20_f32_2e28", |c| norm::<f32>(c, vector_len(c, 28), NormOrder::P(20.0))),
        ("dot_f32_2e28", |c| dot::<f32>(c, vector_len(c, 28), DotKind::Plain)),
        ("dotc_c32_2e27", |c| dot::<Complex32>(c, vector_len(c, 27), DotKind::Conjugated)),
        ("transpose_16384", |c| transpose(c, if c.quick { 2048 } else { 16384 })),
        ("pad8_constant_8192", |c| pad(c, image_side(c), Border::ZERO)),
        ("pad8_reflect_8192", |c| pad(c, image_side(c), Border::Mirror)),
        ("conv3_8192", |c| conv(c, &image(c), &[3, 3])),
        ("conv5_8192", |c| conv(c, &image(c), &[5, 5])),
        ("conv7_8192", |c| conv(c, &image(c), &[7, 7])),
        ("conv15_8192", |c| conv(c, &image(c), &[15, 15])),
        ("conv31_8192", |c| conv(c, &image(c), &[31, 31])),
        ("conv63_8192", |c| conv(c, &image(c), &[63, 63])),
        ("conv3_batch64_512", |c| {
            conv(c, &[64, if c.quick { 128 } else { 512 }, if c.quick { 128 } else { 512 }], &[3, 3])
        }),
        ("conv3d3_512", |c| {
            let n = if c.quick { 128 } else { 512 };
            conv(c, &[n, n, n], &[3, 3, 3])
        }),
        ("filterbank_seed004", |c| filter_bank(c, &[10, 4, 128, 128], &[10, 4, 16, 16])),
        ("chain10", chain10),
    ];
    fixed.into_iter().chain(crate::fft_cases::cases()).chain(crate::ndimage_cases::cases()).collect()
}

/// 2^log2 elements, 2^22 (or 2^21 for the complex case) with `--quick`.
fn vector_len(c: &Ctx, log2: u32) -> usize {
    1 << if c.quick { log2 - 6 } else { log2 }
}

fn image_side(c: &Ctx) -> usize {
    if c.quick { 2048 } else { 8192 }
}

/// The convolution image: 8192², 1024² with `--quick` (scipy's 63×63 on 2048² would take minutes).
fn image(c: &Ctx) -> [usize; 2] {
    let n = if c.quick { 1024 } else { 8192 };
    [n, n]
}

/// The ids of every case, in run order.
pub(crate) fn case_ids() -> Vec<&'static str> {
    cases().into_iter().map(|(id, _)| id).collect()
}

/// Runs the suite: the copy ceiling first, then every case selected by `only` (ids or id prefixes). A case
/// that fails is reported and skipped (returned with its error beside the records), so one bad case does not
/// cost the run.
pub(crate) fn run(app: &ClApp, options: &SuiteOptions) -> Result<(Vec<Record>, Vec<Failure>)> {
    let info = app.device();
    let estimated = peak_gflops(info);
    let peak = match (options.peak_gflops, estimated) {
        (Some(f32), _) => Some((f32, options.peak_gflops_f64.unwrap_or(f32 / 2.0))),
        (None, Some((f32, f64, _))) => Some((f32, options.peak_gflops_f64.unwrap_or(f64))),
        (None, None) => None,
    };
    let source =
        if options.peak_gflops.is_some() { "given by --peak-gflops" } else { estimated.map_or("unknown", |e| e.2) };
    let date = today();
    println!("device: {} ({}, driver {})", info.name, info.version, info.driver_version);
    match peak {
        Some((f32, f64)) => println!("peak: {:.0} GFLOP/s f32, {:.0} f64 ({source})", f32, f64),
        None => println!("peak FLOP/s: unknown (give --peak-gflops)"),
    }
    let mut ctx = Ctx { app, quick: options.quick, budget_ms: options.budget_ms, ceiling_gbps: f64::NAN, peak, date };
    let mut records = Vec::new();
    print_header();
    for (id, case) in [("copy_buffer", copy_buffer as CaseFn), ("copy_kernel", copy_kernel)] {
        let record = finish(&ctx, id, case(&ctx)?);
        print_record(&record);
        records.push(record);
    }
    ctx.ceiling_gbps = records.iter().filter_map(|r| r.gbps).fold(0.0, f64::max);
    for r in &mut records {
        r.pct_bandwidth = r.gbps.map(|g| 100.0 * g / ctx.ceiling_gbps);
    }
    println!("copy ceiling: {:.1} GB/s", ctx.ceiling_gbps);
    let selected = |id: &str| options.only.is_empty() || options.only.iter().any(|o| id.starts_with(o.as_str()));
    let mut failed = Vec::new();
    for (id, case) in cases().into_iter().filter(|(id, _)| selected(id)) {
        match case(&ctx) {
            Ok(outcome) => {
                let record = finish(&ctx, id, outcome);
                print_record(&record);
                records.push(record);
            }
            Err(e) => {
                println!("{id:<20} failed: {e}");
                failed.push((id.to_string(), e));
            }
        }
    }
    Ok((records, failed))
}

/// Today's date (UTC) as YYYY-MM-DD, from the system clock.
pub(crate) fn today() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn finish(ctx: &Ctx, id: &str, (size, dtype, o): (String, String, Outcome)) -> Record {
    let m = o.measured;
    let rate = |amount: f64| (amount > 0.0 && m.device.median > 0.0).then(|| amount / m.device.median / 1e6);
    let (gflops, gbps) = (rate(o.flops), rate(o.bytes));
    let info = ctx.app.device();
    let chain = id == "chain10";
    Record {
        case: id.to_string(),
        device: info.name.clone(),
        driver: info.driver_version.clone(),
        date: ctx.date.clone(),
        quick: ctx.quick,
        size,
        dtype,
        median_ms: m.device.median,
        min_ms: m.device.min,
        max_ms: m.device.max,
        stream_ms: m.stream_ms,
        launch_ms: m.launch.median,
        enqueue_ms: m.enqueue.median,
        init_ms: o.init_ms,
        gflops,
        gbps,
        pct_bandwidth: gbps.map(|g| 100.0 * g / ctx.ceiling_gbps).filter(|p| p.is_finite()),
        pct_flops: gflops.zip(ctx.peak).map(|(g, (f32, f64))| 100.0 * g / if o.double { f64 } else { f32 }),
        algorithm: o.algorithm,
        commands: m.commands,
        runs: m.runs,
        max_error: o.check.as_ref().map(|c| c.error),
        tolerance: o.check.as_ref().map(|c| c.tolerance),
        check: o.check.map(|c| c.what),
        overhead_us_per_process: chain.then(|| (m.stream_ms - m.device.median) * 1e3 / 10.0),
        enqueue_us_per_process: chain.then(|| m.enqueue.median * 1e3 / 10.0),
    }
}

fn print_header() {
    println!(
        "{:<20} {:<14} {:<4} {:>10} {:>21} {:>10} {:>10} {:>9} {:>9} {:>9} {:>8} {:>6}  {:<10} algorithm",
        "case",
        "size",
        "type",
        "device ms",
        "(min – max)",
        "stream ms",
        "launch ms",
        "init ms",
        "GFLOP/s",
        "GB/s",
        "%bw",
        "%flop",
        "check"
    );
}

fn print_record(r: &Record) {
    let opt = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |v| format!("{v:.p$}"));
    let check = match (r.correct(), r.max_error) {
        (Some(true), Some(e)) => format!("ok {e:.1e}"),
        (Some(false), Some(e)) => format!("WRONG {e:.1e}"),
        _ => "-".to_string(),
    };
    println!(
        "{:<20} {:<14} {:<4} {:>10.4} {:>21} {:>10.4} {:>10.4} {:>9.2} {:>9} {:>9} {:>8} {:>6}  {:<10} {}{}",
        r.case,
        r.size,
        r.dtype,
        r.median_ms,
        format!("({:.4} – {:.4})", r.min_ms, r.max_ms),
        r.stream_ms,
        r.launch_ms,
        r.init_ms,
        opt(r.gflops, 1),
        opt(r.gbps, 1),
        opt(r.pct_bandwidth, 1),
        opt(r.pct_flops, 1),
        check,
        r.algorithm,
        match (r.overhead_us_per_process, r.enqueue_us_per_process) {
            (Some(o), Some(e)) => format!("; host overhead {o:.2} µs/process, enqueue {e:.2} µs/process"),
            _ => String::new(),
        }
    );
}

/// Writes the records as a JSON list, through a temporary file renamed into place.
pub(crate) fn write_json(path: &std::path::Path, records: &[Record]) -> Result<()> {
    let text = serde_json::to_string_pretty(records)
        .map_err(|e| cliper::Error::invalid("cliper-bench", format!("serialising the records: {e}")))?;
    let io = |source| cliper::Error::Io { path: path.to_path_buf(), source };
    let tmp = path.with_extension("json.cliper-tmp");
    std::fs::write(&tmp, text + "\n").map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

fn eps<T: Element>() -> f64 {
    if T::IS_DOUBLE { f64::EPSILON } else { f32::EPSILON as f64 }
}

fn copy_buffer(ctx: &Ctx) -> Result<(String, String, Outcome)> {
    let n = vector_len(ctx, 28);
    let x = XData::from_slice(ctx.app, &[n], &random_data::<f32>(n))?;
    let y = XData::<f32>::zeros(ctx.app, &[n])?;
    let (measured, init_ms, algorithm) = time_process(ctx, StridedCopy::new(&x, &y, CopyParams::default()), |p| {
        p.strategy().map_or("?".into(), |s| s.to_string())
    })?;
    let outcome =
        Outcome { measured, init_ms, algorithm, bytes: 8.0 * n as f64, flops: 0.0, double: false, check: None };
    Ok((n.to_string(), "f32".into(), outcome))
}

/// A float4 grid-stride copy: the ceiling a kernel (rather than the driver's copy engine) reaches.
struct CopyKernel {
    x: XData<f32>,
    y: XData<f32>,
    kernel: Prepared<Kernel>,
}

// One float4 per work-item: the simplest form, and the fastest of those tried on PoCL (a grid-stride loop over
// 16 groups per compute unit ran at a third of the speed there).
const COPY_SOURCE: &str = "kernel void copy4(global const float4* x, global float4* y, ulong n4) {
    size_t i = get_global_id(0);
    if (i < n4) y[i] = x[i];
}";

impl Process for CopyKernel {
    fn name(&self) -> &str {
        "CopyKernel"
    }
    fn init(&mut self) -> Result<()> {
        let program = self.x.app().build_program("copy4", COPY_SOURCE, "")?;
        self.kernel.set(program.kernel("copy4")?.owned_by("CopyKernel"));
        Ok(())
    }
    fn launch(&mut self) -> Result<()> {
        let n4 = (self.x.len() / 4) as u64;
        self.kernel
            .get("CopyKernel")?
            .launch()
            .input("x", &self.x)
            .output("y", &self.y)
            .index("n4", IndexType::U64, n4)
            .global(&[(n4 as usize).div_ceil(256) * 256])
            .local(&[256])
            .work(32 * n4, 0)
            .enqueue()
    }
    fn is_initialized(&self) -> bool {
        self.kernel.is_ready()
    }
}

fn copy_kernel(ctx: &Ctx) -> Result<(String, String, Outcome)> {
    let n = vector_len(ctx, 28);
    let x = XData::from_slice(ctx.app, &[n], &random_data::<f32>(n))?;
    let y = XData::<f32>::zeros(ctx.app, &[n])?;
    let process = CopyKernel { x: x.clone(), y: y.clone(), kernel: Prepared::default() };
    let (measured, init_ms, _) = time_process(ctx, process, |_| String::new())?;
    let same = y.to_vec()? == x.to_vec()?;
    let check = Check { error: if same { 0.0 } else { 1.0 }, tolerance: 0.0, what: "every element equal".into() };
    let algorithm = "one float4 per work-item, groups of 256".to_string();
    let outcome =
        Outcome { measured, init_ms, algorithm, bytes: 8.0 * n as f64, flops: 0.0, double: false, check: Some(check) };
    Ok((n.to_string(), "f32".into(), outcome))
}

fn gemm<T: Element>(ctx: &Ctx, n: usize) -> Result<(String, String, Outcome)> {
    let ha = random_data::<T>(n * n);
    let hb = random_data_seeded::<T>(n * n, 0x1234_5678_9ABC_DEF1);
    let a = XData::from_slice(ctx.app, &[n, n], &ha)?;
    let b = XData::from_slice(ctx.app, &[n, n], &hb)?;
    let c = XData::<T>::zeros(ctx.app, &[n, n])?;
    let (measured, init_ms, algorithm) =
        time_process(ctx, MatMul::new(&a, &b, &c, MatMulParams::default()), |p| {
            match (p.strategy(), p.embedded_strategy()) {
                (Some(outer), Some(inner)) => format!("{outer}({inner})"),
                (outer, _) => outer.map_or("?".to_string(), |s| s.to_string()),
            }
        })?;
    let got = c.to_vec()?;
    let mut worst = 0.0f64;
    for s in samples(n * n, 256) {
        let (i, j) = (s / n, s % n);
        let (mut want, mut magnitude) = (Complex64::new(0.0, 0.0), 0.0);
        // Row i of A against column j of B (every n-th value from j; n ≥ 1 here, as there are samples).
        for (x, y) in values_in(&ha, i * n..(i + 1) * n)?.iter().zip(hb.iter().skip(j).step_by(n)) {
            let (x, y) = (x.to_c64(), y.to_c64());
            want += x * y;
            magnitude += x.norm() * y.norm();
        }
        worst = worst.max((value_at(&got, s)?.to_c64() - want).norm() / magnitude);
    }
    let check = Check {
        error: worst,
        tolerance: 2.0 * n as f64 * eps::<T>(),
        what: "256 sampled entries, |Δ| / Σ|a||b| ≤ 2·K·ε".into(),
    };
    let size = std::mem::size_of::<T>() as f64;
    let flops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (n as f64).powi(3);
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 3.0 * (n * n) as f64 * size,
        flops,
        double: T::IS_DOUBLE,
        check: Some(check),
    };
    Ok((n.to_string(), T::NAME.into(), outcome))
}

fn matrix_power(ctx: &Ctx, n: usize, exponent: u64) -> Result<(String, String, Outcome)> {
    // Entries in [-1, 1)/n keep A^100 far from overflow.
    let host: Vec<f32> = random_data::<f32>(n * n).into_iter().map(|v| v / n as f32).collect();
    let a = XData::from_slice(ctx.app, &[n, n], &host)?;
    let out = XData::<f32>::zeros(ctx.app, &[n, n])?;
    // The schedule MatrixPower planned: its number of products (for the FLOP count) and their GEMM kernel.
    let mut products = 0;
    let (measured, init_ms, algorithm) =
        time_process(ctx, MatrixPower::new(&a, &out, exponent), |p| match p.strategy() {
            Some(PowerStrategy::Products { products: count, gemm }) => {
                products = count;
                format!("{count} products by squaring, {gemm}")
            }
            other => other.map_or("?".into(), |s| s.to_string()),
        })?;
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 0.0,
        flops: 2.0 * (n as f64).powi(3) * products as f64,
        double: false,
        check: None,
    };
    Ok((n.to_string(), "f32".into(), outcome))
}

fn norm<T: Element>(ctx: &Ctx, n: usize, order: NormOrder) -> Result<(String, String, Outcome)> {
    let host = random_data::<T>(n);
    let x = XData::from_slice(ctx.app, &[n], &host)?;
    let out = XData::<T::Real>::zeros(ctx.app, &[])?;
    let (measured, init_ms, algorithm) = time_process(ctx, NormN::new(&x, &out, NormParams::new(order)), |p| {
        p.strategy().map(|s| s.to_string()).unwrap_or_default()
    })?;
    let got = value_at(&out.to_vec()?, 0)?.to_c64().re;
    let p = match order {
        NormOrder::P(p) => p,
        _ => f64::INFINITY,
    };
    // Scaled by the largest |x| so that |x|^20 stays representable, as the kernel does.
    let scale = host.iter().map(|v| v.to_c64().norm()).fold(0.0, f64::max);
    let want = scale * host.iter().map(|v| (v.to_c64().norm() / scale).powf(p)).sum::<f64>().powf(1.0 / p);
    let check = Check {
        error: (got - want).abs() / want,
        tolerance: 1e-5,
        what: "relative to the float64 norm; 1e-5 ≈ 100 ε(f32) for partial sums of ≤ 2^20 terms".into(),
    };
    let size = std::mem::size_of::<T>() as f64;
    let flops = if p == 2.0 { 2.0 } else { 3.0 } * n as f64;
    let outcome =
        Outcome { measured, init_ms, algorithm, bytes: n as f64 * size, flops, double: false, check: Some(check) };
    Ok((n.to_string(), T::NAME.into(), outcome))
}

fn dot<T: Element>(ctx: &Ctx, n: usize, kind: DotKind) -> Result<(String, String, Outcome)> {
    let hx = random_data::<T>(n);
    let hy = random_data_seeded::<T>(n, 0x0DDB_1A5E_5BAD_5EED);
    let x = XData::from_slice(ctx.app, &[n], &hx)?;
    let y = XData::from_slice(ctx.app, &[n], &hy)?;
    let out = XData::<T>::zeros(ctx.app, &[])?;
    let (measured, init_ms, algorithm) = time_process(ctx, Dot::new(&x, &y, &out, DotParams::new(kind)), |p| {
        p.strategy().map(|s| s.to_string()).unwrap_or_default()
    })?;
    let got = value_at(&out.to_vec()?, 0)?.to_c64();
    let (mut want, mut magnitude) = (Complex64::new(0.0, 0.0), 0.0);
    for (a, b) in hx.iter().zip(&hy) {
        let a = if kind == DotKind::Conjugated { a.to_c64().conj() } else { a.to_c64() };
        want += a * b.to_c64();
        magnitude += a.norm() * b.to_c64().norm();
    }
    let check = Check {
        error: (got - want).norm() / magnitude,
        tolerance: 1e-6,
        what: "|Δ| / Σ|x||y| against float64; 1e-6 ≈ 10 ε(f32) for tree-summed partials".into(),
    };
    let size = std::mem::size_of::<T>() as f64;
    let flops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * n as f64;
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 2.0 * n as f64 * size,
        flops,
        double: false,
        check: Some(check),
    };
    Ok((n.to_string(), T::NAME.into(), outcome))
}

fn transpose(ctx: &Ctx, n: usize) -> Result<(String, String, Outcome)> {
    let host = random_data::<f32>(n * n);
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let y = XData::<f32>::zeros(ctx.app, &[n, n])?;
    let (measured, init_ms, algorithm) =
        time_process(ctx, Transpose::new(&x, &y), |p| p.strategy().map_or("?".into(), |s| s.to_string()))?;
    let got = y.to_vec()?;
    let mut wrong = 0;
    for s in samples(n * n, 1 << 16) {
        if value_at(&got, (s % n) * n + s / n)? != value_at(&host, s)? {
            wrong += 1;
        }
    }
    let check = Check {
        error: wrong as f64,
        tolerance: 0.0,
        what: "65536 sampled elements equal (count of wrong ones)".into(),
    };
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 8.0 * (n * n) as f64,
        flops: 0.0,
        double: false,
        check: Some(check),
    };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}

fn pad(ctx: &Ctx, n: usize, border: Border) -> Result<(String, String, Outcome)> {
    const W: usize = 8;
    let host = random_data::<f32>(n * n);
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let m = n + 2 * W;
    let y = XData::<f32>::zeros(ctx.app, &[m, m])?;
    let (measured, init_ms, _) =
        time_process(ctx, Pad::new(&x, &y, PadParams::new(&[(W, W)]).border(border)), |_| String::new())?;
    let got = y.to_vec()?;
    // numpy's rules for a width below the side: constant 0 outside, reflect mirrors about the edge element.
    let source = |i: usize| -> Option<usize> {
        let i = i as isize - W as isize;
        let last = n as isize - 1;
        match border {
            Border::Mirror => Some(if i < 0 {
                -i
            } else if i > last {
                2 * last - i
            } else {
                i
            } as usize),
            _ => (0..=last).contains(&i).then_some(i as usize),
        }
    };
    let mut wrong = 0;
    // The samples, then the whole left border column.
    for s in samples(m * m, 1 << 16).into_iter().chain((0..m).map(|j| j * m)) {
        let want = match (source(s / m), source(s % m)) {
            (Some(i), Some(j)) => value_at(&host, i * n + j)?,
            _ => 0.0,
        };
        if value_at(&got, s)? != want {
            wrong += 1;
        }
    }
    let check = Check {
        error: wrong as f64,
        tolerance: 0.0,
        what: "65536 sampled elements and the left border equal numpy.pad's (count of wrong ones)".into(),
    };
    let algorithm = format!("{border:?}");
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 4.0 * (n * n + m * m) as f64,
        flops: 0.0,
        double: false,
        check: Some(check),
    };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}

/// Same-size convolution with zero borders (cuDNN's padding k/2, scipy.ndimage.convolve mode constant) of
/// `shape` by a random filter over its last axes; leading axes are a batch.
fn conv(ctx: &Ctx, shape: &[usize], filter_shape: &[usize]) -> Result<(String, String, Outcome)> {
    let n: usize = shape.iter().product();
    let taps: usize = filter_shape.iter().product();
    let host = random_data::<f32>(n);
    let weights = random_data_seeded::<f32>(taps, 0x5EED_F11E_4000_0001);
    let x = XData::from_slice(ctx.app, shape, &host)?;
    let y = XData::<f32>::zeros(ctx.app, shape)?;
    let filter = Filter::new(filter_shape, weights.clone())?;
    let process = Convolution::new(&x, &filter, &y, ConvParams::default().border(Border::ZERO));
    let (measured, init_ms, algorithm) =
        time_process(ctx, process, |p| p.strategy().map_or("?".to_string(), |s| format!("{s:?}")))?;
    let got = y.to_vec()?;
    // scipy.ndimage.convolve, odd sizes: out[i] = Σ_j w[j] · x[i + k/2 − j], zero outside.
    let rank = filter_shape.len();
    let image_shape = trailing(shape, rank)?;
    let image_len: usize = image_shape.iter().product();
    let mut worst = 0.0f64;
    for s in samples(n, 256) {
        let (base, pos) = (s - s % image_len, s % image_len);
        let index = unravel(pos, image_shape);
        let (mut want, mut magnitude) = (0.0f64, 0.0f64);
        for (t, &w) in weights.iter().enumerate() {
            let tap = unravel(t, filter_shape);
            let mut offset = 0usize;
            let mut inside = true;
            for (((&at, &f), &t), &extent) in index.iter().zip(filter_shape).zip(&tap).zip(image_shape) {
                let i = at as isize + (f / 2) as isize - t as isize;
                if i < 0 || i >= extent as isize {
                    inside = false;
                    break;
                }
                offset = offset * extent + i as usize;
            }
            if inside {
                let v = value_at(&host, base + offset)? as f64;
                want += w as f64 * v;
                magnitude += (w as f64 * v).abs();
            }
        }
        worst = worst.max((value_at(&got, s)? as f64 - want).abs() / magnitude.max(f64::MIN_POSITIVE));
    }
    let check = Check {
        error: worst,
        tolerance: 2.0 * taps as f64 * eps::<f32>(),
        what: "256 sampled outputs, |Δ| / Σ|w·x| ≤ 2·taps·ε".into(),
    };
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 8.0 * n as f64,
        flops: 2.0 * (n * taps) as f64,
        double: false,
        check: Some(check),
    };
    Ok((shape_text(shape), "f32".into(), outcome))
}

/// Row-major multi-index of `flat` in `shape`.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (i, &extent) in index.iter_mut().zip(shape).rev() {
        *i = flat % extent;
        flat /= extent;
    }
    index
}

fn filter_bank(ctx: &Ctx, input: &[usize], filters: &[usize]) -> Result<(String, String, Outcome)> {
    let hx = random_data::<f32>(input.iter().product());
    let hw = random_data_seeded::<f32>(filters.iter().product(), 0xF17E_4BA2_0000_0004);
    let x = XData::from_slice(ctx.app, input, &hx)?;
    let w = XData::from_slice(ctx.app, filters, &hw)?;
    let params = FilterBankParams::default();
    let out_shape = FilterBank::<f32>::output_shape(input, filters, &params)?;
    let y = XData::<f32>::zeros(ctx.app, &out_shape)?;
    let (measured, init_ms, algorithm) = time_process(ctx, FilterBank::new(&x, &w, &y, params), |p| {
        p.strategy().map_or("?".to_string(), |s| format!("{s:?}"))
    })?;
    let got = y.to_vec()?;
    let (&[_, c, h, wd], &[_, _, r, s], &[_, k, p, q]) = (input, filters, out_shape.as_slice()) else {
        return Err(cliper::Error::invalid(
            "cliper-bench",
            format!("filter bank case: input {input:?}, filters {filters:?} and output {out_shape:?} need 4 axes"),
        ));
    };
    let mut worst = 0.0f64;
    // cuDNN's cross-correlation: y[n,k,p,q] = Σ x[n,c,p+r,q+s] · w[k,c,r,s].
    for flat in samples(got.len(), 256) {
        let (ni, ki, pi, qi) = (flat / (k * p * q), flat / (p * q) % k, flat / q % p, flat % q);
        let (mut want, mut magnitude) = (0.0f64, 0.0f64);
        for ci in 0..c {
            for ri in 0..r {
                for si in 0..s {
                    let v = value_at(&hx, ((ni * c + ci) * h + pi + ri) * wd + qi + si)? as f64
                        * value_at(&hw, ((ki * c + ci) * r + ri) * s + si)? as f64;
                    want += v;
                    magnitude += v.abs();
                }
            }
        }
        worst = worst.max((value_at(&got, flat)? as f64 - want).abs() / magnitude);
    }
    let taps = (c * r * s) as f64;
    let check = Check {
        error: worst,
        tolerance: 2.0 * taps * eps::<f32>(),
        what: "256 sampled outputs, |Δ| / Σ|w·x| ≤ 2·C·R·S·ε".into(),
    };
    let bytes = 4.0 * (hx.len() + hw.len() + got.len()) as f64;
    let flops = 2.0 * got.len() as f64 * taps;
    let outcome = Outcome { measured, init_ms, algorithm, bytes, flops, double: false, check: Some(check) };
    Ok((format!("{} * {}", shape_text(input), shape_text(filters)), "f32".into(), outcome))
}

/// Ten small processes on a 256² image, as a cascade would run them: the figure of interest is the host time
/// per process beyond the device time.
/// chain10's arrays and pipeline on `app`: ten processes on a 256² phantom.
fn chain10_pipeline(app: &ClApp) -> Result<(Pipeline, XData<f32>, XData<f32>)> {
    let (n, m) = (256, 272);
    let image = XData::<f32>::zeros(app, &[n, n])?;
    let padded = XData::<f32>::zeros(app, &[m, m])?;
    let smoothed = XData::<f32>::zeros(app, &[m, m])?;
    let turned = XData::<f32>::zeros(app, &[m, m])?;
    let blurred = XData::<f32>::zeros(app, &[m, m])?;
    let product = XData::<f32>::zeros(app, &[m, m])?;
    let back = XData::<f32>::zeros(app, &[m, m])?;
    let rows = XData::<f32>::zeros(app, &[m])?;
    let energy = XData::<f32>::zeros(app, &[])?;
    let peak = XData::<f32>::zeros(app, &[])?;
    let box5 = Filter::new(&[5, 5], vec![1.0f32 / 25.0; 25])?;
    let gauss = Filter::<f32>::gaussian(1.5, 2)?;
    let pipeline = Pipeline::new(app)
        .then(SheppLogan::new(&image))
        .then(Pad::new(&image, &padded, PadParams::new(&[(8, 8)]).border(Border::Mirror)))
        .then(Convolution::new(&padded, &box5, &smoothed, ConvParams::default().border(Border::ZERO)))
        .then(Transpose::new(&smoothed, &turned))
        .then(Convolution::new(&turned, &gauss, &blurred, ConvParams::default().border(Border::Mirror)))
        .then(MatMul::new(&blurred, &turned, &product, MatMulParams::default()))
        .then(Permute::new(&product, &back, &[1, 0]))
        .then(NormN::new(&back, &rows, NormParams::new(NormOrder::P(2.0)).along(1)))
        .then(Dot::new(&rows, &rows, &energy, DotParams::default()))
        .then(NormN::new(&blurred, &peak, NormParams::new(NormOrder::Inf)));
    Ok((pipeline, back, energy))
}

/// Ten small processes back to back: device time from the suite's profiling queue; the host's time per process
/// (inside `launch`, and beyond the device's time) from a second app on the same device without profiling — what
/// a program that does not profile pays (a profiling queue makes every enqueue dearer on NVIDIA's driver).
fn chain10(ctx: &Ctx) -> Result<(String, String, Outcome)> {
    let app = ctx.app;
    let n = 256;
    let (mut pipeline, back, energy) = chain10_pipeline(app)?;
    let start = Instant::now();
    pipeline.init()?;
    app.finish()?;
    let init_ms = start.elapsed().as_secs_f64() * 1e3;
    let mut measured = measure(app, &mut pipeline, ctx.budget_ms)?;
    // Check the end of the chain against the host: ‖rows‖² equals the squared Frobenius norm of `back`.
    let b: Vec<f64> = back.to_vec()?.into_iter().map(f64::from).collect();
    let want: f64 = b.iter().map(|v| v * v).sum();
    let got = f64::from(value_at(&energy.to_vec()?, 0)?);
    let check = Check {
        error: (got - want).abs() / want,
        tolerance: 1e-5,
        what: "Σ rows² (Dot of the row norms) against the host's Σ back² (float64)".into(),
    };
    let plain = ClApp::builder().use_env(true).build()?;
    if plain.device().name == app.device().name {
        let (mut host_timed, _, _) = chain10_pipeline(&plain)?;
        host_timed.init()?;
        let host = crate::measure::measure_host(&plain, &mut host_timed, ctx.budget_ms)?;
        (measured.launch, measured.enqueue, measured.stream_ms) = (host.launch, host.enqueue, host.stream_ms);
    }
    let algorithm = format!(
        "{} processes, {} commands: {}",
        pipeline.len(),
        measured.commands,
        crate::measure::commands_by_process(&mut pipeline)?
    );
    let outcome = Outcome { measured, init_ms, algorithm, bytes: 0.0, flops: 0.0, double: false, check: Some(check) };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}
