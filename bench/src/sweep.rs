//! The single-case sweeps (`cliper-bench transpose | permute | matmul | …`): one process, chosen sizes and
//! kernels, one printed line per variant in the format of the peers' lines, for tuning and for comparing kernels.

use crate::case::value_at;
use crate::measure::{Timing, random_data, shape_text, time_pipeline};
use cliper::Result;
use cliper::prelude::*;
use num_complex::Complex64;
use std::time::Instant;

pub(crate) fn parse_tiles(text: &str) -> Result<TransposeTiles> {
    let bad = || cliper::Error::InvalidArgument {
        op: "cliper-bench".into(),
        reason: format!("tile shape `{text}` is not TILExROWS, like 32x8"),
    };
    let (t, r) = text.split_once('x').ok_or_else(bad)?;
    Ok(TransposeTiles { tile: t.trim().parse().map_err(|_| bad())?, rows: r.trim().parse().map_err(|_| bad())? })
}

pub(crate) fn permute(app: &ClApp, shape: &[usize], axes: &[usize], timing: Timing) -> Result<()> {
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

pub(crate) fn transpose<T: Element>(
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
        // The transpose's plan, with the tiles forced when given.
        let process = StridedCopy::new(&input.t(), &output, CopyParams { tiles: *tile });
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
            let mut wrong = 0;
            for (n, &want) in host.iter().enumerate().take(batch * plane) {
                let (b, k) = (n / plane, n % plane);
                if value_at(&got, b * plane + (k % cols) * rows + k / cols)? != want {
                    wrong += 1;
                }
            }
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

/// `auto` → the planner (None), else [`GemmStrategy`]'s text (`direct`, `128x128x16/16x16/4x4`, `blocked:…`).
pub(crate) fn parse_gemm_kernel(text: &str) -> Result<Option<GemmStrategy>> {
    if text == "auto" { Ok(None) } else { text.parse().map(Some) }
}

/// What `matmul` prints or keeps besides its timings.
#[derive(Clone)]
pub(crate) struct Report {
    /// Sampled outputs against float64 dot products.
    pub check: bool,
    /// Each kernel's share (the pipeline's profile).
    pub profile: bool,
    /// Where to write the product's program binary (PTX on NVIDIA).
    pub binary: Option<std::path::PathBuf>,
}

pub(crate) fn matmul<T: Element>(
    app: &ClApp,
    [m, n, k]: [usize; 3],
    batch: usize,
    strategies: &[Option<GemmStrategy>],
    precision: GemmPrecision,
    timing: Timing,
    report: &Report,
) -> Result<()> {
    let (a_shape, b_shape, c_shape) = ([batch, m, k], [batch, k, n], [batch, m, n]);
    let ha = random_data::<T>(batch * m * k);
    let hb: Vec<T> = random_data::<T>(batch * k * n + 7).into_iter().skip(7).collect();
    let a = XData::from_slice(app, &a_shape, &ha)?;
    let b = XData::from_slice(app, &b_shape, &hb)?;
    let c = XData::<T>::zeros(app, &c_shape)?;
    let flops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (batch * m * n * k) as f64;
    let size = if batch == 1 { format!("{m}x{n}x{k}") } else { format!("{batch}x{m}x{n}x{k}") };
    for &strategy in strategies {
        let params = match strategy {
            Some(s) => MatMulParams::default().strategy(s),
            None => MatMulParams::default(),
        }
        .precision(precision);
        let mut product = MatMul::new(&a, &b, &c, params);
        // Initialised here to read the plan before the pipeline takes the process (its own init finds the
        // program in the cache).
        product.init()?;
        if let (Some(path), Some((program, _))) = (&report.binary, product.compiled()) {
            std::fs::write(path, program.binary()?)
                .map_err(|e| cliper::Error::invalid("cliper-bench", format!("writing {}: {e}", path.display())))?;
        }
        let resources = crate::tune::kernel_resources(&product);
        let shown = match (product.strategy(), product.embedded_strategy()) {
            (Some(outer), Some(inner)) => format!("{outer}({inner})"),
            (outer, _) => outer.map_or_else(String::new, |s| s.to_string()),
        };
        let mut pipeline = Pipeline::new(app).then(product);
        let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
        println!(
            "cliper  matmul    {:<4} {:<16} {:>9.4} ms {:>8.1} GFLOP/s   events {:>9.4} ms {:>8.1} GFLOP/s   kernel {} {}{}",
            T::NAME,
            size,
            wall,
            flops / wall / 1e6,
            events,
            flops / events / 1e6,
            shown,
            resources,
            if precision == GemmPrecision::Full { String::new() } else { format!(" precision {precision}") }
        );
        if report.profile {
            println!("{}", pipeline.profile()?);
        }
        if report.check {
            let got = c.to_vec()?;
            let mut worst = 0.0f64;
            for s in 0..64 {
                let (q, i, j) = ((s * 7) % batch, (s * 7919) % m, (s * 104_729) % n);
                let (mut want, mut mag) = (Complex64::new(0.0, 0.0), 0.0);
                for l in 0..k {
                    let (x, y) =
                        (value_at(&ha, (q * m + i) * k + l)?.to_c64(), value_at(&hb, (q * k + l) * n + j)?.to_c64());
                    want += x * y;
                    mag += x.norm() * y.norm();
                }
                worst = worst.max((value_at(&got, (q * m + i) * n + j)?.to_c64() - want).norm() / mag);
            }
            let eps = if T::IS_DOUBLE { f64::EPSILON } else { f32::EPSILON as f64 };
            // TF32 rounds each operand to 11 significant bits: up to 2⁻¹⁰ per product on top of the sum's error.
            let rounding = if precision == GemmPrecision::Tf32 && !T::IS_DOUBLE { 2f64.powi(-10) } else { 0.0 };
            println!("check: worst |Δ|/(|A||B|) over 64 samples {worst:.2e} (K·ε = {:.2e})", k as f64 * eps);
            if worst > k as f64 * eps * 4.0 + rounding {
                return Err(cliper::Error::invalid("cliper-bench", "the product is wrong"));
            }
        }
    }
    Ok(())
}

pub(crate) fn power<T: Element>(
    app: &ClApp,
    size: usize,
    exponent: u64,
    precision: GemmPrecision,
    scale: f64,
    timing: Timing,
) -> Result<()> {
    // Entries in [0, scale)/size, as torch.rand(…)/size in the peer: the Perron root near 1/2 keeps A^100 near
    // 2⁻¹⁰⁰, inside f32's range, so the result can be compared (entries in [-1, 1) would underflow to 0).
    let host: Vec<T> = random_data::<T>(size * size)
        .into_iter()
        .map(|v| {
            let v = v.to_c64();
            T::from_c64(Complex64::new(v.re + 1.0, v.im + 1.0) * (scale / (2.0 * size as f64)))
        })
        .collect();
    let a = XData::from_slice(app, &[size, size], &host)?;
    let out = XData::<T>::zeros(app, &[size, size])?;
    let mut power = MatrixPower::new(&a, &out, exponent).precision(precision);
    power.init()?;
    // The number of products MatrixPower planned (0 for the identity and the copy), for the FLOP count.
    let products = match power.strategy() {
        Some(PowerStrategy::Products { products, .. }) => products as f64,
        _ => 0.0,
    };
    let mut pipeline = Pipeline::new(app).then(power);
    let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
    let flops = if T::IS_COMPLEX { 8.0 } else { 2.0 } * (size as f64).powi(3) * products;
    println!(
        "cliper  power {exponent:<4} {:<4} {:<14} {:>9.4} ms {:>8.1} GFLOP/s   events {:>9.4} ms   {products} products \
         precision {precision} scale {scale}",
        T::NAME,
        size,
        wall,
        flops / wall / 1e6,
        events
    );
    if !T::IS_DOUBLE {
        // Against A^n in float64 on the device (the same entries, FP64 products): this precision and plain FP32.
        let wide: Vec<Complex64> = host.iter().map(|v| v.to_c64()).collect();
        let reference: Vec<Complex64> = if T::IS_COMPLEX {
            let a64 = XData::from_slice(app, &[size, size], &wide)?;
            MatrixPower::apply(&a64, exponent)?.to_vec()?
        } else {
            let re: Vec<f64> = wide.iter().map(|v| v.re).collect();
            let a64 = XData::from_slice(app, &[size, size], &re)?;
            MatrixPower::apply(&a64, exponent)?.to_vec()?.into_iter().map(|v| Complex64::new(v, 0.0)).collect()
        };
        let scale = reference.iter().map(|v| v.norm()).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
        let error =
            |got: &[T]| got.iter().zip(&reference).map(|(g, r)| (g.to_c64() - r).norm()).fold(0.0, f64::max) / scale;
        let full = MatrixPower::apply(&a, exponent)?.to_vec()?;
        println!(
            "check: max |A^n − A^n(f64)| / max |A^n(f64)|: {precision} {:.2e}, full FP32 {:.2e}",
            error(&out.to_vec()?),
            error(&full)
        );
    }
    Ok(())
}

pub(crate) fn norm<T: Element>(app: &ClApp, len: usize, order: NormOrder, timing: Timing) -> Result<()> {
    let x = XData::from_slice(app, &[len], &random_data::<T>(len))?;
    let out = XData::<T::Real>::zeros(app, &[])?;
    let mut process = NormN::new(&x, &out, NormParams::new(order));
    cliper::Process::init(&mut process)?;
    let strategy = process.strategy().map(|s| s.to_string()).unwrap_or_default();
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

pub(crate) fn dot<T: Element>(app: &ClApp, len: usize, conjugate: bool, timing: Timing) -> Result<()> {
    let x = XData::from_slice(app, &[len], &random_data::<T>(len))?;
    let y = XData::from_slice(app, &[len], &random_data::<T>(len + 3).into_iter().skip(3).collect::<Vec<_>>())?;
    let out = XData::<T>::zeros(app, &[])?;
    let kind = if conjugate { DotKind::Conjugated } else { DotKind::Plain };
    let mut pipeline = Pipeline::new(app).then(Dot::new(&x, &y, &out, DotParams::new(kind)));
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

pub(crate) fn pad(app: &ClApp, shape: &[usize], width: usize, border: Border, timing: Timing) -> Result<()> {
    let n: usize = shape.iter().product();
    let x = XData::from_slice(app, shape, &random_data::<f32>(n))?;
    let out_shape = Pad::<f32>::output_shape(shape, &PadParams::new(&[(width, width)]))?;
    let out = XData::<f32>::zeros(app, &out_shape)?;
    let mut pipeline = Pipeline::new(app).then(Pad::new(&x, &out, PadParams::new(&[(width, width)]).border(border)));
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

pub(crate) fn conv(
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
        // `NAME:kernels`: the same with ConvParams::kernels_only (no passes on a CPU device's host threads).
        let (base, kernels_only) = name.strip_suffix(":kernels").map_or((name.as_str(), false), |b| (b, true));
        let algorithm = match base {
            "auto" => ConvAlgorithm::Auto,
            "direct" => ConvAlgorithm::Direct,
            "tiled" => ConvAlgorithm::Tiled,
            "blocked" => ConvAlgorithm::Blocked,
            "separable" => ConvAlgorithm::Separable,
            "separable-fused" => ConvAlgorithm::SeparableFused,
            "fft" => ConvAlgorithm::Fft,
            other => return Err(cliper::Error::invalid("cliper-bench", format!("unknown algorithm `{other}`"))),
        };
        let mut process = Convolution::new(
            &x,
            &filter,
            &out,
            ConvParams::default().border(border).algorithm(algorithm).kernels_only(kernels_only),
        );
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

pub(crate) fn filter_bank(
    app: &ClApp,
    [input, filters, padding]: [&[usize]; 3],
    algorithms: &[String],
    precision: GemmPrecision,
    tiles: &[GemmTiles],
    timing: Timing,
    profile: bool,
) -> Result<()> {
    let x = XData::from_slice(app, input, &random_data::<f32>(input.iter().product()))?;
    let f = XData::from_slice(app, filters, &random_data::<f32>(filters.iter().product()))?;
    let pad = [padding.first().copied().unwrap_or(0), padding.get(1).copied().unwrap_or(0)];
    // The algorithms, the GEMM ones (implicit, winograd) once per tile choice when tiles are given.
    let runs = algorithms.iter().flat_map(|a| {
        let gemm = matches!(a.as_str(), "implicit" | "winograd" | "winograd4x4") && !tiles.is_empty();
        let choices: Vec<Option<GemmTiles>> = if gemm { tiles.iter().copied().map(Some).collect() } else { vec![None] };
        choices.into_iter().map(move |t| (a.clone(), t))
    });
    for (name, tiles) in runs {
        let algorithm = match name.as_str() {
            "auto" => FilterBankAlgorithm::Auto,
            "direct" => FilterBankAlgorithm::Direct,
            "blocked" => FilterBankAlgorithm::Blocked,
            "im2col" => FilterBankAlgorithm::Im2col,
            "implicit" => FilterBankAlgorithm::ImplicitGemm,
            "winograd" => FilterBankAlgorithm::Winograd,
            "winograd4x4" => FilterBankAlgorithm::Winograd4x4,
            other => return Err(cliper::Error::invalid("cliper-bench", format!("unknown algorithm `{other}`"))),
        };
        let params = FilterBankParams::default().padding(pad).algorithm(algorithm).precision(precision);
        let params = match tiles {
            Some(t) => params.gemm_tiles(t),
            None => params,
        };
        let y = XData::<f32>::zeros(app, &FilterBank::<f32>::output_shape(input, filters, &params)?)?;
        let mut process = FilterBank::new(&x, &f, &y, params);
        process.init()?;
        let strategy = process.strategy();
        let mut pipeline = Pipeline::new(app).then(process);
        let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
        let flops = 2.0 * (y.len() * filters.iter().skip(1).product::<usize>()) as f64;
        println!(
            "cliper  filterbank {} * {} {:>9.4} ms {:>8.1} GFLOP/s   events {:>9.4} ms   {name}: {strategy:?}{}",
            shape_text(input),
            shape_text(filters),
            wall,
            flops / wall / 1e6,
            events,
            if precision == GemmPrecision::Full { String::new() } else { format!(" precision {precision}") }
        );
        if profile {
            println!("{}", pipeline.profile()?);
        }
    }
    Ok(())
}

pub(crate) fn fft<T: cliper::ComplexElement>(
    app: &ClApp,
    shape: &[usize],
    axes: &[usize],
    algorithms: &[String],
    timing: Timing,
    profile: bool,
) -> Result<()> {
    let n: usize = shape.iter().product();
    let x = XData::from_slice(app, shape, &random_data::<T>(n))?;
    let y = XData::<T>::zeros(app, shape)?;
    for name in algorithms {
        let algorithm = match name.as_str() {
            "auto" => cliper::FftAlgorithm::Auto,
            "local" => cliper::FftAlgorithm::LocalMemory,
            "global" => cliper::FftAlgorithm::GlobalPasses,
            other => return Err(cliper::Error::invalid("cliper-bench", format!("unknown algorithm `{other}`"))),
        };
        let params = FftParams::forward().algorithm(algorithm);
        let params = if axes.is_empty() { params } else { params.axes(axes) };
        let mut process = cliper::Fft::new(&x, &y, params);
        process.init()?;
        let strategy = process.strategy().map(|s| s.to_string()).unwrap_or_default();
        let mut pipeline = Pipeline::new(app).then(process);
        let (wall, events) = time_pipeline(app, &mut pipeline, timing)?;
        if profile {
            println!("{}", pipeline.profile()?);
        }
        let bytes = 2.0 * (n * std::mem::size_of::<T>()) as f64;
        println!(
            "cliper  fft {:<4} {:<16} {:>9.4} ms {:>8.1} GB/s   events {:>9.4} ms   {name}: {strategy}",
            T::NAME,
            shape_text(shape),
            wall,
            bytes / wall / 1e6,
            events
        );
    }
    Ok(())
}
