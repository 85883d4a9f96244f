//! The suite's FFT and reconstruction cases (issue 10), sized like `peer_fft.py`'s: complex64 transforms over
//! all axes of the shape after a batch axis, and SimpleMRIRecon / RSoSRecon of random k-space with random maps
//! on non-centred k-space (`torch.fft.ifft2`, as the peer does it). Each output is checked at a few sampled
//! positions against a float64 DFT computed on the host from the definition.

use crate::case::{CaseFn, Check, Ctx, Outcome, samples, time_process, trailing, value_at, values_in};
use crate::measure::random_data_seeded;
use cliper::Result;
use cliper::prelude::*;
use num_complex::{Complex32, Complex64};
use std::f64::consts::PI;

pub(crate) fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        ("fft2_8192", |c| fft(c, if c.quick { &[1024, 1024] } else { &[8192, 8192] }, 2)),
        ("fft2_batch64_512", |c| fft(c, if c.quick { &[16, 128, 128] } else { &[64, 512, 512] }, 2)),
        ("fft3_256", |c| fft(c, if c.quick { &[64, 64, 64] } else { &[256, 256, 256] }, 3)),
        ("fft1_2e24", |c| fft(c, if c.quick { &[1 << 18] } else { &[1 << 24] }, 1)),
        ("fft2_1000", |c| fft(c, if c.quick { &[250, 250] } else { &[1000, 1000] }, 2)),
        ("fft2_4093", |c| fft(c, if c.quick { &[509, 509] } else { &[4093, 4093] }, 2)),
        ("recon_sense_8x256", |c| recon(c, 8, if c.quick { 64 } else { 256 }, true)),
        ("recon_sense_32x512", |c| recon(c, 32, if c.quick { 128 } else { 512 }, true)),
        ("recon_sense_8x1024", |c| recon(c, 8, if c.quick { 256 } else { 1024 }, true)),
        ("recon_rsos_8x256", |c| recon(c, 8, if c.quick { 64 } else { 256 }, false)),
        ("recon_rsos_32x512", |c| recon(c, 32, if c.quick { 128 } else { 512 }, false)),
        ("recon_rsos_8x1024", |c| recon(c, 8, if c.quick { 256 } else { 1024 }, false)),
    ]
}

/// The flop count of the FFT convention (5 N log₂N per transform of N points).
fn fft_flops(batch: usize, points: usize) -> f64 {
    5.0 * (batch * points) as f64 * (points as f64).log2()
}

/// `Σ_j x_j · exp(sign·2πi·Σ_a j_a k_a / n_a)` over the last `rank` axes of one batch entry, in float64.
fn dft_at(x: &[Complex32], dims: &[usize], base: usize, k: &[usize], sign: f64) -> Result<(Complex64, f64)> {
    let points: usize = dims.iter().product();
    let (mut sum, mut energy) = (Complex64::new(0.0, 0.0), 0.0);
    for (flat, v) in values_in(x, base..base + points)?.iter().enumerate() {
        let (mut rest, mut turns) = (flat, 0.0);
        for (&n, &ka) in dims.iter().zip(k).rev() {
            let j = rest % n;
            rest /= n;
            turns += ((j * ka) % n) as f64 / n as f64;
        }
        let v = Complex64::new(v.re as f64, v.im as f64);
        sum += v * Complex64::from_polar(1.0, sign * 2.0 * PI * turns);
        energy += v.norm_sqr();
    }
    Ok((sum, energy.sqrt()))
}

fn fft(ctx: &Ctx, shape: &[usize], rank: usize) -> Result<(String, String, Outcome)> {
    let n: usize = shape.iter().product();
    let host = random_data_seeded::<Complex32>(n, 0xF0F0_1234_5678_9ABC);
    let x = XData::from_slice(ctx.app, shape, &host)?;
    let y = XData::<Complex32>::zeros(ctx.app, shape)?;
    let dims = trailing(shape, rank)?;
    let axes: Vec<usize> = (shape.len() - rank..shape.len()).collect();
    let process = Fft::new(&x, &y, FftParams::forward().axes(&axes));
    let (measured, init_ms, algorithm) =
        time_process(ctx, process, |p| p.strategy().map_or("?".into(), |s| s.to_string()))?;
    let got = y.to_vec()?;
    let points: usize = dims.iter().product();
    // |X_k| is about √N·rms(x): the error is measured against ‖x‖₂ of the transformed entry.
    let mut worst = 0.0f64;
    for s in samples(n, 4) {
        let (base, pos) = (s - s % points, s % points);
        let mut k = vec![0; rank];
        let mut rest = pos;
        for (ka, &n) in k.iter_mut().zip(dims).rev() {
            *ka = rest % n;
            rest /= n;
        }
        let (want, norm) = dft_at(&host, dims, base, &k, -1.0)?;
        let g = value_at(&got, s)?;
        worst = worst.max((Complex64::new(g.re as f64, g.im as f64) - want).norm() / norm);
    }
    let check = Check {
        error: worst,
        tolerance: 2e-5,
        what: "4 sampled outputs against the float64 DFT, |Δ| / ‖x‖₂ ≤ 2e-5 (≈ 300 u·log₂N)".into(),
    };
    let batch = n / points;
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 16.0 * n as f64,
        flops: fft_flops(batch, points),
        double: false,
        check: Some(check),
    };
    let size = shape.iter().map(usize::to_string).collect::<Vec<_>>().join("x");
    Ok((size, "c32".into(), outcome))
}

fn recon(ctx: &Ctx, coils: usize, side: usize, sense: bool) -> Result<(String, String, Outcome)> {
    let (n, plane) = (coils * side * side, side * side);
    let hk = random_data_seeded::<Complex32>(n, 0x0123_4567_89AB_CDEF);
    let hs = random_data_seeded::<Complex32>(n, 0x7777_1111_2222_3333);
    let k = KData::new(XData::from_slice(ctx.app, &[coils, side, side], &hk)?, 2)?
        .with_sensitivity_maps(XData::from_slice(ctx.app, &[coils, side, side], &hs)?)?;
    let (measured, init_ms, got): (_, _, Vec<Complex64>) = if sense {
        let out = XData::<Complex32>::zeros(ctx.app, &[side, side])?;
        let (m, i, _) =
            time_process(ctx, SimpleMRIRecon::new(&k, &out, ReconParams::default().centered(false)), |_| {
                String::new()
            })?;
        (m, i, out.to_vec()?.into_iter().map(|v| Complex64::new(v.re as f64, v.im as f64)).collect())
    } else {
        let out = XData::<f32>::zeros(ctx.app, &[side, side])?;
        let (m, i, _) =
            time_process(ctx, RSoSRecon::new(&k, &out, ReconParams::default().centered(false)), |_| String::new())?;
        (m, i, out.to_vec()?.into_iter().map(|v| Complex64::new(v as f64, 0.0)).collect())
    };
    // Pixel p: the inverse DFT of each coil (× 1/N), then Σ image·conj(map) or √Σ|image|².
    let mut worst = 0.0f64;
    for p in samples(plane, 3) {
        let (mut sum, mut squares, mut scale) = (Complex64::new(0.0, 0.0), 0.0, 0.0);
        for c in 0..coils {
            let (v, norm) = dft_at(&hk, &[side, side], c * plane, &[p / side, p % side], 1.0)?;
            let v = v / plane as f64;
            let s = value_at(&hs, c * plane + p)?;
            let s = Complex64::new(s.re as f64, s.im as f64);
            sum += v * s.conj();
            squares += v.norm_sqr();
            scale += norm / plane as f64 * if sense { s.norm() } else { 1.0 };
        }
        let want = if sense { sum } else { Complex64::new(squares.sqrt(), 0.0) };
        worst = worst.max((value_at(&got, p)? - want).norm() / scale);
    }
    let check = Check {
        error: worst,
        tolerance: 2e-5,
        what: "3 sampled pixels against float64 inverse DFTs and the coil combination, relative to Σ‖k_c‖₂/N".into(),
    };
    let algorithm = format!(
        "{}: ifft2 per coil, then {}",
        if sense { "SimpleMRIRecon" } else { "RSoSRecon" },
        if sense { "Σ·conj(maps) in one kernel" } else { "√Σ|·|²" }
    );
    let outcome = Outcome {
        measured,
        init_ms,
        algorithm,
        bytes: 8.0 * if sense { 5.0 } else { 4.0 } * n as f64,
        flops: fft_flops(coils, plane),
        double: false,
        check: Some(check),
    };
    Ok((format!("{coils}x{side}x{side}"), "c32".into(), outcome))
}
