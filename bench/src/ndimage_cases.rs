//! The suite's cases for the operations of issue 25 (element-wise maths, gradient magnitude; rank filters,
//! morphology and resampling as they land), sized like `scripts/bench/peer_ndimage.py`'s CuPy and scipy runs:
//! 8192² f32 images (2048² with `--quick`) and 512³ volumes (128³). Each output is checked at sampled positions
//! against a float64 host computation.

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
        ("median3_8192", |c| rank(c, &[side(c), side(c)], 3, RankKind::Median)),
        ("median5_8192", |c| rank(c, &[side(c), side(c)], 5, RankKind::Median)),
        ("median7_8192", |c| rank(c, &[side(c), side(c)], 7, RankKind::Median)),
        ("median5x5x5_512", |c| {
            let n = if c.quick { 128 } else { 512 };
            rank(c, &[n, n, n], 5, RankKind::Median)
        }),
        // grey_erosion(size=15) is minimum_filter(size=15).
        ("erosion15_8192", |c| rank(c, &[side(c), side(c)], 15, RankKind::Minimum)),
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
