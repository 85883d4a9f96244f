//! The suite's cases for the operations of issue 25 (element-wise maths, gradient magnitude; rank filters,
//! morphology and resampling as they land), sized like `scripts/bench/peer_ndimage.py`'s CuPy and scipy runs:
//! 8192² f32 images (2048² with `--quick`) and 512³ volumes (128³). Each output is checked at sampled positions
//! against a float64 host computation (for the resampling cases: scipy's cubic B-spline prefilter of the whole
//! input in float64 on the host, then the spline at the sampled outputs' coordinates).

use crate::case::{CaseFn, Check, Ctx, Outcome, samples, time_process, value_at};
use crate::measure::random_data_seeded;
use cliper::Result;
use cliper::prelude::*;

pub(crate) fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // One input, one output: the copy ceiling's traffic (goal ≥ 90 % of it).
        ("ewchain_8192", |c| ew_chain(c, side(c))),
        // Two inputs, one output: the fused gradient magnitude hypot(gx, gy).
        ("ewhypot_8192", |c| ew_hypot(c, side(c))),
        ("gradmag_sobel_8192", |c| gradient_magnitude(c, side(c))),
        // scipy.ndimage.gaussian_gradient_magnitude(im, 2): 17 × 17 taps, one fused kernel on GPUs.
        ("gradmag_gauss2_8192", |c| gaussian_gradient_magnitude(c, side(c), 2.0, None)),
        // The same as two separable convolutions and the magnitude kernel (what CPU devices run).
        ("gradmag_gauss2_separate_8192", |c| gaussian_gradient_magnitude(c, side(c), 2.0, Some(false))),
        // scipy.ndimage.laplace(im) > 0.1 (issue 50 item 6): the comparison in the convolution's stores, as a
        // Pipeline fuses it, and as a kernel of its own.
        // The third asks for conv_blocked, whose stores take the comparison on every device (CPUs included).
        ("laplace_threshold_8192", |c| laplace_threshold(c, side(c), Some(ConvAlgorithm::Auto))),
        ("laplace_threshold_separate_8192", |c| laplace_threshold(c, side(c), None)),
        ("laplace_threshold_blocked_8192", |c| laplace_threshold(c, side(c), Some(ConvAlgorithm::Blocked))),
        // sobel magnitude > 2: the threshold in the fused kernel's stores on GPUs, and as a kernel of its own.
        ("gradmag_sobel_threshold_8192", |c| sobel_threshold(c, side(c), true)),
        ("gradmag_sobel_threshold_separate_8192", |c| sobel_threshold(c, side(c), false)),
        ("median3_8192", |c| rank(c, &[side(c), side(c)], 3, RankKind::Median)),
        ("median5_8192", |c| rank(c, &[side(c), side(c)], 5, RankKind::Median)),
        ("median7_8192", |c| rank(c, &[side(c), side(c)], 7, RankKind::Median)),
        ("median5x5x5_512", |c| {
            let n = if c.quick { 128 } else { 512 };
            rank(c, &[n, n, n], 5, RankKind::Median)
        }),
        // grey_erosion(size=15) is minimum_filter(size=15).
        ("erosion15_8192", |c| rank(c, &[side(c), side(c)], 15, RankKind::Minimum)),
        // scipy.ndimage.zoom(vol, 2, order=3): the separable passes (512³ → 1024³; 128³ with --quick).
        ("zoom2o3_512", |c| zoom2(c, if c.quick { 128 } else { 512 })),
        // scipy.ndimage.rotate(im, 30, reshape=False, order=3): the gather, 16 taps per output.
        ("rotate30o3_8192", |c| rotate30(c, side(c))),
        // scipy.ndimage.label of a random mask (half set): 4-connected components, scipy's numbering.
        ("label_8192", |c| label(c, side(c))),
        // Issue 26: 1,000 slices of 256² through pad → Gaussian → Sobel → per-slice norm.
        ("slices1000_256", slices),
    ]
}

/// The image side: 8192, 2048 with `--quick`.
fn side(c: &Ctx) -> usize {
    if c.quick { 2048 } else { 8192 }
}

/// `sqrt(clip(x, 0.1, 0.9) · 2 + 1)`: what a chain of three element-wise steps fuses into.
fn ew_chain(ctx: &Ctx, n: usize) -> Result<(String, String, Outcome)> {
    let host = random_data_seeded::<f32>(n * n, 0xE1E1_0001);
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let y = XData::<f32>::zeros(ctx.app, &[n, n])?;
    let expr = (Expr::input(0).clip(0.1, 0.9) * 2.0 + 1.0).sqrt();
    let (measured, init_ms, algorithm) =
        time_process(ctx, Elementwise::new(&[&x], &y, expr), |p| p.strategy().map_or("?".into(), |s| s.to_string()))?;
    let got = y.to_vec()?;
    let mut worst = 0.0f64;
    for s in samples(n * n, 4096) {
        let want = ((value_at(&host, s)? as f64).clamp(0.1, 0.9) * 2.0 + 1.0).sqrt();
        worst = worst.max((value_at(&got, s)? as f64 - want).abs() / want);
    }
    let check = Some(Check { error: worst, tolerance: 4.0 * f32::EPSILON as f64, what: "relative, f64 host".into() });
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 8.0 * (n * n) as f64,
        flops: 5.0 * (n * n) as f64,
        double: false,
        check,
    };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}

/// A stencil then a threshold of its output, as two Pipeline stages: fused by the Pipeline, or (`fused` false)
/// each initialised on its own first so that they do not fuse. `stencil` makes the process from the input to
/// its output and says what it planned; `reference` gives the stencil's value at (i, j) in float64 with the sum
/// of |w·x| it took (scipy's reflect border), from `host`, the input's values. Checked at sampled elements: the stencil against the reference
/// relative to that sum, the mask exactly against the device's own stored value (a value within rounding of the
/// threshold may go either way, never differently from the one stored).
/// The stencil's float64 value at (i, j) and Σ|w·x|, from the input's value at any (row, column) (reflected).
type Reference = fn(&dyn Fn(isize, isize) -> Result<f64>, isize, isize) -> Result<(f64, f64)>;

struct ThresholdAfter<P> {
    stencil: P,
    threshold: f64,
    /// What the stencil planned, and how it runs the stages taken (`None`: none).
    strategy: fn(&P) -> Option<String>,
    epilogue: fn(&P) -> Option<EpilogueStrategy>,
    reference: Reference,
    flops: f64,
}

fn threshold_after<P: Process + 'static>(
    ctx: &Ctx,
    host: &[f32],
    y: &XData<f32>,
    fused: bool,
    case: ThresholdAfter<P>,
) -> Result<(String, String, Outcome)> {
    let n = y.shape().first().copied().unwrap_or(0);
    let m = XData::<f32>::zeros(ctx.app, y.shape())?;
    let (mut stencil, mut threshold) =
        (case.stencil, Elementwise::new(&[y], &m, Expr::input(0).greater(case.threshold)));
    ctx.app.finish()?;
    let start = std::time::Instant::now();
    if !fused {
        stencil.init()?;
        threshold.init()?;
    }
    let mut pipeline = Pipeline::new(ctx.app);
    let stencil = pipeline.push_shared(stencil);
    pipeline.push(Box::new(threshold));
    pipeline.init()?;
    ctx.app.finish()?;
    let init_ms = start.elapsed().as_secs_f64() * 1e3;
    let algorithm = stencil.lock().map_or("?".into(), |s| {
        let epilogue = (case.epilogue)(&s).map_or("as a kernel of its own".into(), |e| e.to_string());
        format!("{}; the threshold {epilogue}", (case.strategy)(&s).unwrap_or_else(|| "?".into()))
    });
    let measured = crate::measure::measure(ctx.app, &mut pipeline, ctx.budget_ms)?;
    let (got, mask) = (y.to_vec()?, m.to_vec()?);
    let r = |k: isize| if k < 0 { -k - 1 } else if k >= n as isize { 2 * n as isize - k - 1 } else { k } as usize;
    let at = |a: isize, b: isize| value_at(host, r(a) * n + r(b)).map(f64::from);
    let mut worst = 0.0f64;
    for s in samples(n * n, 4096) {
        let (want, scale) = (case.reference)(&at, (s / n) as isize, (s % n) as isize)?;
        let stored = value_at(&got, s)?;
        let mask_right = value_at(&mask, s)? == if f64::from(stored) > case.threshold { 1.0 } else { 0.0 };
        let error = (f64::from(stored) - want).abs() / scale.max(f64::MIN_POSITIVE);
        worst = worst.max(if mask_right { error } else { 1.0 });
    }
    let check = Some(Check {
        error: worst,
        tolerance: 16.0 * f32::EPSILON as f64,
        what: "relative to Σ|w·x|; mask exact".into(),
    });
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        // What the fused form must move: the image read, the stencil's output and the mask written.
        bytes: 12.0 * (n * n) as f64,
        flops: case.flops * (n * n) as f64,
        double: false,
        check,
    };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}

/// `laplace(x) > 0.1` with the convolution's algorithm (`None`: the planner's, not fused).
fn laplace_threshold(ctx: &Ctx, n: usize, fused: Option<ConvAlgorithm>) -> Result<(String, String, Outcome)> {
    let host = random_data_seeded::<f32>(n * n, 0xE1E1_0009);
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let y = XData::<f32>::zeros(ctx.app, &[n, n])?;
    let params = ConvParams::default().border(Border::Reflect).algorithm(fused.unwrap_or_default());
    let case = ThresholdAfter {
        stencil: Convolution::new(&x, &Filter::<f32>::laplace(2)?, &y, params),
        threshold: 0.1,
        strategy: |c| c.strategy().map(|s| s.to_string()),
        epilogue: |c| c.epilogue(),
        reference: |at, i, j| {
            let (c, around) = (at(i, j)?, [at(i - 1, j)?, at(i + 1, j)?, at(i, j - 1)?, at(i, j + 1)?]);
            Ok((around.iter().sum::<f64>() - 4.0 * c, around.iter().map(|v| v.abs()).sum::<f64>() + 4.0 * c.abs()))
        },
        flops: 10.0,
    };
    threshold_after(ctx, &host, &y, fused.is_some(), case)
}

/// `sobel magnitude(x) > 2` (scipy's generic_gradient_magnitude with sobel): the threshold in the fused kernel's
/// stores on GPUs as a Pipeline fuses it (`fused`), or as a kernel of its own.
fn sobel_threshold(ctx: &Ctx, n: usize, fused: bool) -> Result<(String, String, Outcome)> {
    let host = random_data_seeded::<f32>(n * n, 0xE1E1_000A);
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let y = XData::<f32>::zeros(ctx.app, &[n, n])?;
    let case = ThresholdAfter {
        stencil: GradientMagnitude::new(&x, &y, GradientParams::default()),
        threshold: 2.0,
        strategy: |g| g.strategy().map(|s| s.to_string()),
        epilogue: |g| g.epilogue(),
        reference: |at, i, j| {
            let (mut gx, mut gy, mut scale) = (0.0, 0.0, 0.0f64);
            for (d, w) in [(-1isize, 1.0), (0, 2.0), (1, 1.0)] {
                gx += w * (at(i + d, j + 1)? - at(i + d, j - 1)?);
                gy += w * (at(i + 1, j + d)? - at(i - 1, j + d)?);
                scale += w * (at(i + d, j + 1)?.abs() + at(i + d, j - 1)?.abs());
                scale += w * (at(i + 1, j + d)?.abs() + at(i - 1, j + d)?.abs());
            }
            Ok((gx.hypot(gy), scale))
        },
        flops: 37.0,
    };
    threshold_after(ctx, &host, &y, fused, case)
}

fn ew_hypot(ctx: &Ctx, n: usize) -> Result<(String, String, Outcome)> {
    let (ha, hb) = (random_data_seeded::<f32>(n * n, 0xE1E1_0002), random_data_seeded::<f32>(n * n, 0xE1E1_0003));
    let a = XData::from_slice(ctx.app, &[n, n], &ha)?;
    let b = XData::from_slice(ctx.app, &[n, n], &hb)?;
    let y = XData::<f32>::zeros(ctx.app, &[n, n])?;
    let (measured, init_ms, algorithm) = time_process(ctx, Elementwise::new(&[&a, &b], &y, Expr::magnitude(2)), |p| {
        p.strategy().map_or("?".into(), |s| s.to_string())
    })?;
    let got = y.to_vec()?;
    let mut worst = 0.0f64;
    for s in samples(n * n, 4096) {
        let want = (value_at(&ha, s)? as f64).hypot(value_at(&hb, s)? as f64);
        worst = worst.max((value_at(&got, s)? as f64 - want).abs() / want.max(f64::MIN_POSITIVE));
    }
    let check = Some(Check { error: worst, tolerance: 4.0 * f32::EPSILON as f64, what: "relative, f64 host".into() });
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 12.0 * (n * n) as f64,
        flops: 3.0 * (n * n) as f64,
        double: false,
        check,
    };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}

/// A rank filter of a `size`-wide box over every axis of `shape` (scipy's reflect), checked exactly at sampled
/// elements against the same rank of the window computed on the host.
fn rank(ctx: &Ctx, shape: &[usize], size: usize, kind: RankKind) -> Result<(String, String, Outcome)> {
    let n: usize = shape.iter().product();
    let host = random_data_seeded::<f32>(n, 0xE1E1_0005);
    let x = XData::from_slice(ctx.app, shape, &host)?;
    let y = XData::<f32>::zeros(ctx.app, shape)?;
    let params = RankParams::new(kind).size(&[size]);
    let (measured, init_ms, algorithm) =
        time_process(ctx, RankFilter::new(&x, &y, params), |p| p.strategy().map_or("?".into(), |s| s.to_string()))?;
    let got = y.to_vec()?;
    let reflect = |i: isize, len: usize| -> usize {
        let len = len as isize;
        (if i < 0 {
            -i - 1
        } else if i >= len {
            2 * len - i - 1
        } else {
            i
        }) as usize
    };
    let mut wrong = 0usize;
    let checked = samples(n, 512);
    for &s in &checked {
        let mut index = Vec::with_capacity(shape.len());
        let mut rest = s;
        for &d in shape.iter().rev() {
            index.push(rest % d);
            rest /= d;
        }
        index.reverse();
        let taps = size.pow(shape.len() as u32);
        let mut window = Vec::with_capacity(taps);
        for t in 0..taps {
            let (mut flat, mut rest_t) = (0usize, t);
            let mut offsets = Vec::with_capacity(shape.len());
            for _ in 0..shape.len() {
                offsets.push(rest_t % size);
                rest_t /= size;
            }
            offsets.reverse();
            for ((&at, &o), &d) in index.iter().zip(&offsets).zip(shape) {
                flat = flat * d + reflect(at as isize + o as isize - (size / 2) as isize, d);
            }
            window.push(value_at(&host, flat)?);
        }
        window.sort_by(f32::total_cmp);
        let r = kind.rank_of(taps)?;
        wrong += usize::from(window.get(r) != got.get(s));
    }
    let check =
        Some(Check { error: wrong as f64, tolerance: 0.0, what: format!("elements differing of {}", checked.len()) });
    let outcome = Outcome { measured, init_ms, algorithm, bytes: 8.0 * n as f64, flops: 0.0, double: false, check };
    let size_text = shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
    Ok((size_text, "f32".into(), outcome))
}

/// scipy.ndimage.generic_gradient_magnitude(x, sobel), mode reflect.
fn gradient_magnitude(ctx: &Ctx, n: usize) -> Result<(String, String, Outcome)> {
    let host = random_data_seeded::<f32>(n * n, 0xE1E1_0004);
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let y = XData::<f32>::zeros(ctx.app, &[n, n])?;
    let (measured, init_ms, algorithm) =
        time_process(ctx, GradientMagnitude::new(&x, &y, GradientParams::default()), |p| {
            p.strategy().map_or("?".into(), |s| s.to_string())
        })?;
    let got = y.to_vec()?;
    // scipy's reflect: index −1 → 0, n → n − 1.
    let at = |i: isize, j: isize| -> Result<f64> {
        let r = |k: isize| if k < 0 { -k - 1 } else if k >= n as isize { 2 * n as isize - k - 1 } else { k } as usize;
        Ok(value_at(&host, r(i) * n + r(j))? as f64)
    };
    let mut worst = 0.0f64;
    for s in samples(n * n, 2048) {
        let (i, j) = ((s / n) as isize, (s % n) as isize);
        let (mut gx, mut gy, mut scale) = (0.0, 0.0, 0.0f64);
        for (d, w) in [(-1isize, 1.0), (0, 2.0), (1, 1.0)] {
            gx += w * (at(i + d, j + 1)? - at(i + d, j - 1)?);
            gy += w * (at(i + 1, j + d)? - at(i - 1, j + d)?);
            scale += w * 4.0;
        }
        worst = worst.max((value_at(&got, s)? as f64 - gx.hypot(gy)).abs() / scale);
    }
    let check =
        Some(Check { error: worst, tolerance: 16.0 * f32::EPSILON as f64, what: "relative to Σ|w|·max|x|".into() });
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 8.0 * (n * n) as f64,
        flops: 36.0 * (n * n) as f64,
        double: false,
        check,
    };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}

/// `GradientMagnitude` with the Gaussian of `sigma` on an n² f32 image (`fused` as `GradientParams::fused`),
/// checked at sampled outputs against the separable sums in float64 with the same weights and scipy's reflect
/// border.
fn gaussian_gradient_magnitude(
    ctx: &Ctx,
    n: usize,
    sigma: f64,
    fused: Option<bool>,
) -> Result<(String, String, Outcome)> {
    let host = random_data_seeded::<f32>(n * n, 0xE1E1_0005);
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let y = XData::<f32>::zeros(ctx.app, &[n, n])?;
    let mut params = GradientParams::default().derivative(Derivative::Gaussian(vec![sigma])).rank(2);
    params.fused = fused;
    let (measured, init_ms, algorithm) = time_process(ctx, GradientMagnitude::new(&x, &y, params), |p| {
        p.strategy().map_or("?".into(), |s| s.to_string())
    })?;
    let got = y.to_vec()?;
    let [g, d] =
        [0, 1].map(|order| Filter::<f64>::gaussian_derivative(&[sigma], &[order]).map(|f| f.values().to_vec()));
    let (g, d) = (g?, d?);
    let radius = (g.len() / 2) as isize;
    let r = |k: isize| if k < 0 { -k - 1 } else if k >= n as isize { 2 * n as isize - k - 1 } else { k } as usize;
    let mut worst = 0.0f64;
    for s in samples(n * n, 512) {
        let (i, j) = ((s / n) as isize, (s % n) as isize);
        let (mut gx, mut gy, mut scale) = (0.0, 0.0, 0.0f64);
        for (a, (wg_y, wd_y)) in g.iter().zip(&d).enumerate() {
            for (b, (wg_x, wd_x)) in g.iter().zip(&d).enumerate() {
                let v = value_at(&host, r(i - radius + a as isize) * n + r(j - radius + b as isize))? as f64;
                gx += wg_y * wd_x * v;
                gy += wd_y * wg_x * v;
                scale += (wg_y * wd_x).abs() + (wd_y * wg_x).abs();
            }
        }
        worst = worst.max((value_at(&got, s)? as f64 - gx.hypot(gy)).abs() / scale);
    }
    let check =
        Some(Check { error: worst, tolerance: 16.0 * f32::EPSILON as f64, what: "relative to Σ|w|·max|x|".into() });
    let taps = (g.len() * 2 * 2) as f64 * 2.0;
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 8.0 * (n * n) as f64,
        flops: taps * (n * n) as f64,
        double: false,
        check,
    };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}

/// The cubic B-spline coefficients of `data` (row-major `shape`), every axis, scipy's mirror boundary: the
/// float64 reference of the resampling cases.
fn host_spline3(data: &mut [f64], shape: &[usize]) {
    let z = 3f64.sqrt() - 2.0;
    let gain = (1.0 - z) * (1.0 - 1.0 / z);
    for axis in 0..shape.len() {
        let n = shape.get(axis).copied().unwrap_or(1);
        let inner: usize = shape.iter().skip(axis + 1).product();
        let outer: usize = shape.iter().take(axis).product();
        if n < 2 {
            continue;
        }
        let mut line = vec![0.0f64; n];
        for o in 0..outer {
            for i in 0..inner {
                let at = |k: usize| o * n * inner + k * inner + i;
                for (k, v) in line.iter_mut().enumerate() {
                    *v = data.get(at(k)).copied().unwrap_or(0.0) * gain;
                }
                // scipy's _init_causal_mirror, the causal pass, _init_anticausal_mirror, the anticausal pass.
                let zn1 = z.powi(n as i32 - 1);
                let last = line.last().copied().unwrap_or(0.0);
                let mut c0 = line.first().copied().unwrap_or(0.0) + zn1 * last;
                let mut zi = z;
                for k in 1..n - 1 {
                    c0 +=
                        zi * (line.get(k).copied().unwrap_or(0.0) + zn1 * line.get(n - 1 - k).copied().unwrap_or(0.0));
                    zi *= z;
                }
                if let Some(first) = line.first_mut() {
                    *first = c0 / (1.0 - zn1 * zn1);
                }
                for k in 1..n {
                    let prev = line.get(k - 1).copied().unwrap_or(0.0);
                    if let Some(v) = line.get_mut(k) {
                        *v += z * prev;
                    }
                }
                let before = line.get(n - 2).copied().unwrap_or(0.0);
                if let Some(v) = line.last_mut() {
                    *v = (z * before + *v) * z / (z * z - 1.0);
                }
                for k in (0..n - 1).rev() {
                    let next = line.get(k + 1).copied().unwrap_or(0.0);
                    if let Some(v) = line.get_mut(k) {
                        *v = z * (next - *v);
                    }
                }
                for (k, v) in line.iter().enumerate() {
                    if let Some(d) = data.get_mut(at(k)) {
                        *d = *v;
                    }
                }
            }
        }
    }
}

/// The cubic spline of coefficients `c` (row-major `shape`) at `point` (inside the array), taps mirrored: what
/// scipy's mode `constant` computes for a coordinate inside.
fn host_cubic_at(c: &[f64], shape: &[usize], point: &[f64]) -> f64 {
    let mut taps: Vec<[(usize, f64); 4]> = Vec::with_capacity(shape.len());
    for (&x, &n) in point.iter().zip(shape) {
        let f = x.floor();
        let u = x - f;
        let w = [
            (1.0 - u).powi(3) / 6.0,
            (3.0 * u * u * (u - 2.0) + 4.0) / 6.0,
            (3.0 * (1.0 - u) * (1.0 - u) * (-1.0 - u) + 4.0) / 6.0,
            u.powi(3) / 6.0,
        ];
        let m = |i: i64| -> usize {
            let n = n as i64;
            let s2 = 2 * n - 2;
            let i = i.rem_euclid(s2.max(1));
            (if i >= n { s2 - i } else { i }) as usize
        };
        let mut t = [(0usize, 0.0f64); 4];
        for (k, slot) in t.iter_mut().enumerate() {
            *slot = (m(f as i64 - 1 + k as i64), w.get(k).copied().unwrap_or(0.0));
        }
        taps.push(t);
    }
    let mut sum = 0.0;
    let count = 4usize.pow(shape.len() as u32);
    for t in 0..count {
        let (mut flat, mut weight, mut rest) = (0usize, 1.0f64, t);
        for (axis, &n) in shape.iter().enumerate() {
            let k = rest % 4;
            rest /= 4;
            let (i, w) = taps.get(axis).and_then(|a| a.get(k)).copied().unwrap_or((0, 0.0));
            flat = flat * n + i;
            weight *= w;
        }
        sum += weight * c.get(flat).copied().unwrap_or(0.0);
    }
    sum
}

/// zoom(vol, 2, order=3) of an n³ f32 volume.
fn zoom2(ctx: &Ctx, n: usize) -> Result<(String, String, Outcome)> {
    let count = n * n * n;
    let host = random_data_seeded::<f32>(count, 0xE1E1_0006);
    let x = XData::from_slice(ctx.app, &[n, n, n], &host)?;
    let m = 2 * n;
    let y = XData::<f32>::zeros(ctx.app, &[m, m, m])?;
    let params = ResampleParams::zoom(&[2.0]);
    let (measured, init_ms, algorithm) =
        time_process(ctx, Resample::new(&x, &y, params), |p| p.strategy().map_or("?".into(), |s| s.to_string()))?;
    let got = y.to_vec()?;
    let mut coefficients: Vec<f64> = host.iter().map(|&v| v as f64).collect();
    host_spline3(&mut coefficients, &[n, n, n]);
    let scale = (n - 1) as f64 / (m - 1) as f64;
    let mut worst = 0.0f64;
    for s in samples(m * m * m, 512) {
        let point = [(s / (m * m)) as f64 * scale, (s / m % m) as f64 * scale, (s % m) as f64 * scale];
        let want = host_cubic_at(&coefficients, &[n, n, n], &point);
        worst = worst.max((value_at(&got, s)? as f64 - want).abs());
    }
    let check = Some(Check { error: worst, tolerance: 1e-5, what: "absolute, data in [0, 1), f64 host".into() });
    let outputs = (m * m * m) as f64;
    // Bytes: the least traffic there is, the input read once and the output written once.
    let bytes = 4.0 * (count as f64 + outputs);
    let outcome = Outcome { measured, init_ms, algorithm, bytes, flops: 3.0 * 8.0 * outputs, double: false, check };
    Ok((format!("{n}x{n}x{n}"), "f32".into(), outcome))
}

/// rotate(im, 30, reshape=False, order=3) of an n² f32 image (mode constant: cval 0 where the coordinate leaves
/// the image).
fn rotate30(ctx: &Ctx, n: usize) -> Result<(String, String, Outcome)> {
    let host = random_data_seeded::<f32>(n * n, 0xE1E1_0007);
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let y = XData::<f32>::zeros(ctx.app, &[n, n])?;
    let params = ResampleParams::rotate(30.0).reshape(false);
    let (measured, init_ms, algorithm) =
        time_process(ctx, Resample::new(&x, &y, params), |p| p.strategy().map_or("?".into(), |s| s.to_string()))?;
    let got = y.to_vec()?;
    let mut coefficients: Vec<f64> = host.iter().map(|&v| v as f64).collect();
    host_spline3(&mut coefficients, &[n, n]);
    let (c, s) = (30f64.to_radians().cos(), 30f64.to_radians().sin());
    let centre = (n as f64 - 1.0) / 2.0;
    let mut worst = 0.0f64;
    for k in samples(n * n, 2048) {
        let (i, j) = ((k / n) as f64 - centre, (k % n) as f64 - centre);
        let point = [c * i + s * j + centre, -s * i + c * j + centre];
        let inside = point.iter().all(|&p| (0.0..=(n - 1) as f64).contains(&p));
        let want = if inside { host_cubic_at(&coefficients, &[n, n], &point) } else { 0.0 };
        worst = worst.max((value_at(&got, k)? as f64 - want).abs());
    }
    let check = Some(Check { error: worst, tolerance: 1e-5, what: "absolute, data in [0, 1), f64 host".into() });
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 8.0 * (n * n) as f64,
        flops: 2.0 * 16.0 * (n * n) as f64,
        double: false,
        check,
    };
    Ok((format!("{n}x{n}"), "f32".into(), outcome))
}

/// label(mask) of an n² random mask (each element set with probability ½), 4-connectivity, in float64 (an 8192²
/// image can hold more labels than float32's exact integers); checked against a host union-find with scipy's
/// numbering at every element.
fn label(ctx: &Ctx, n: usize) -> Result<(String, String, Outcome)> {
    let host: Vec<f64> =
        random_data_seeded::<f32>(n * n, 0xE1E1_0008).iter().map(|&v| f64::from(u8::from(v > 0.5))).collect();
    let x = XData::from_slice(ctx.app, &[n, n], &host)?;
    let y = XData::<f64>::zeros(ctx.app, &[n, n])?;
    let (measured, init_ms, algorithm) = time_process(ctx, Label::new(&x, &y, LabelParams::default()), |p| {
        p.strategy().map_or("?".into(), |s| s.to_string())
    })?;
    let got = y.to_vec()?;
    // Host reference: union-find with the smaller index as root, then numbering in raster order.
    let mut parent: Vec<usize> = (0..n * n).collect();
    fn root(parent: &mut [usize], mut a: usize) -> usize {
        while let Some(&p) = parent.get(a) {
            if p == a {
                break;
            }
            let grand = parent.get(p).copied().unwrap_or(p);
            if let Some(slot) = parent.get_mut(a) {
                *slot = grand;
            }
            a = p;
        }
        a
    }
    let set = |i: usize| host.get(i).is_some_and(|&v| v != 0.0);
    for i in 0..n * n {
        if !set(i) {
            continue;
        }
        for j in [i.checked_sub(1).filter(|_| i % n != 0), i.checked_sub(n)].into_iter().flatten() {
            if set(j) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                let (lo, hi) = (a.min(b), a.max(b));
                if let Some(slot) = parent.get_mut(hi) {
                    *slot = lo;
                }
            }
        }
    }
    let mut number = vec![0u32; n * n];
    let mut next = 0u32;
    let mut wrong = 0usize;
    for i in 0..n * n {
        let want = if set(i) {
            let r = root(&mut parent, i);
            if r == i {
                next += 1;
                if let Some(slot) = number.get_mut(i) {
                    *slot = next;
                }
            }
            number.get(r).copied().unwrap_or(0)
        } else {
            0
        };
        wrong += usize::from(value_at(&got, i)? != f64::from(want));
    }
    let check = Some(Check { error: wrong as f64, tolerance: 0.0, what: format!("labels differing of {}", n * n) });
    let outcome =
        Outcome { measured, init_ms, algorithm, bytes: 16.0 * (n * n) as f64, flops: 0.0, double: true, check };
    Ok((format!("{n}x{n}"), "f64".into(), outcome))
}

/// Issue 26's many-small-images case: `slices` slices of 256² (1,000; 100 with `--quick`) through pad 8
/// (numpy's symmetric) → Gaussian σ = 2 → Sobel along x → one 2-norm per slice, as one batch on the device — the
/// way a stack of CT or MR slices goes through a chain. Peer: the same four calls in CuPy / scipy
/// (scripts/bench/peer_ndimage.py `slices`). Two slices are checked against a float64 host computation.
pub(crate) fn slices(ctx: &Ctx) -> Result<(String, String, Outcome)> {
    let (count, n, w) = (if ctx.quick { 100 } else { 1000 }, 256, 8);
    let m = n + 2 * w;
    let app = ctx.app;
    let host = random_data_seeded::<f32>(count * n * n, 0x51_1CE5);
    let x = XData::from_slice(app, &[count, n, n], &host)?;
    let padded = XData::<f32>::zeros(app, &[count, m, m])?;
    let smooth = XData::<f32>::zeros(app, &[count, m, m])?;
    let edges = XData::<f32>::zeros(app, &[count, m, m])?;
    let norms = XData::<f32>::zeros(app, &[count])?;
    let gauss = Filter::<f32>::gaussian(2.0, 2)?;
    let sobel = Filter::<f32>::sobel(1, 2)?;
    let reflect = ConvParams::default().border(Border::Reflect);
    let mut pipeline = Pipeline::new(app)
        .then(Pad::new(&x, &padded, PadParams::new(&[(0, 0), (w, w), (w, w)]).border(Border::Reflect)))
        .then(Convolution::new(&padded, &gauss, &smooth, reflect.clone()))
        .then(Convolution::new(&smooth, &sobel, &edges, reflect))
        .then(NormN::new(&edges.reshape(&[count, m * m])?, &norms, NormParams::default().along(1)));
    let start = std::time::Instant::now();
    pipeline.init()?;
    app.finish()?;
    let init_ms = start.elapsed().as_secs_f64() * 1e3;
    let measured = crate::measure::measure(app, &mut pipeline, ctx.budget_ms)?;
    let got = norms.to_vec()?;
    let taps: Vec<f64> = Filter::<f64>::gaussian(2.0, 1)?.values().to_vec();
    let mut worst = 0.0f64;
    for slice in [0, count - 1] {
        let image = host.get(slice * n * n..(slice + 1) * n * n).unwrap_or_default();
        let want = slice_reference(image, n, w, &taps);
        worst = worst.max((f64::from(value_at(&got, slice)?) - want).abs() / want);
    }
    let check = Some(Check {
        error: worst,
        tolerance: 1e-5,
        what: "per-slice norm vs float64 host pad/Gaussian/Sobel (f32 rounding through 17+3 taps and a 74k sum)".into(),
    });
    let algorithm = format!(
        "{} processes, {} commands: {}",
        pipeline.len(),
        measured.commands,
        crate::measure::commands_by_process(&mut pipeline)?
    );
    let bytes = 4.0 * (count * (n * n + 6 * m * m)) as f64;
    let outcome = Outcome { measured, init_ms, algorithm, bytes, flops: 0.0, double: false, check };
    Ok((format!("{count}x{n}x{n}"), "f32".into(), outcome))
}

/// The norm of Sobel-x(Gaussian(pad(image))) for one n×n slice, in float64 (scipy's `reflect` borders, which is
/// numpy's `symmetric`; the Sobel's sign does not change the norm).
fn slice_reference(image: &[f32], n: usize, w: usize, taps: &[f64]) -> f64 {
    let m = n + 2 * w;
    let mirror = |i: isize, len: usize| -> usize {
        let len = len as isize;
        let i = if i < 0 { -i - 1 } else { i };
        (if i >= len { 2 * len - i - 1 } else { i }) as usize
    };
    let at = |v: &[f64], r: usize, c: usize| v.get(r * m + c).copied().unwrap_or(0.0);
    let mut padded = vec![0f64; m * m];
    for (i, p) in padded.iter_mut().enumerate() {
        let (r, c) = (mirror(i as isize / m as isize - w as isize, n), mirror((i % m) as isize - w as isize, n));
        *p = f64::from(image.get(r * n + c).copied().unwrap_or(0.0));
    }
    let correlate = |v: &[f64], weights: &[f64], along_rows: bool| -> Vec<f64> {
        let radius = (weights.len() / 2) as isize;
        (0..m * m)
            .map(|i| {
                let (r, c) = (i / m, i % m);
                weights
                    .iter()
                    .enumerate()
                    .map(|(k, wt)| {
                        let d = k as isize - radius;
                        let (rr, cc) =
                            if along_rows { (mirror(r as isize + d, m), c) } else { (r, mirror(c as isize + d, m)) };
                        wt * at(v, rr, cc)
                    })
                    .sum()
            })
            .collect()
    };
    let smooth = correlate(&correlate(&padded, taps, true), taps, false);
    let edges = correlate(&correlate(&smooth, &[1.0, 2.0, 1.0], true), &[-1.0, 0.0, 1.0], false);
    edges.iter().map(|v| v * v).sum::<f64>().sqrt()
}
