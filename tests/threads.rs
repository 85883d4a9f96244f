//! Host commands on one `ClApp` shared by threads (issue 44, item 15).
//!
//! On a CPU device some processes compute on the host, in the mapped memory of their device buffers: MatMul's
//! `GemmStrategy::Native` and the convolution passes "on the host's threads". Between the map and the unmap no
//! other command may run on those buffers; on the one in-order queue a command another thread enqueues meanwhile
//! would start as soon as the map is done and run alongside the host. Here one thread runs a host command again
//! and again, alternating between two inputs, so that between commands its output holds one of two known results
//! in full, while a second thread reads that output back as often as it can. Every read must be one of the two,
//! whole: a read that mixes them, or catches partial sums, saw the output while the host was writing it.
//!
//! Tolerance of a read against a result: 1e-3 relative per element. The two results are the same computation on
//! the same inputs (taken before the threads start), so they can differ only by summation order, at most
//! (K + 2)·ε ≈ 1.2e-4 relative for these positive operands; the other result differs by 50% or more, and a
//! partial sum by a whole block of terms.

use cliper::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// How many times the writer runs its host command.
const ROUNDS: usize = 60;

/// An app without profiling (a profiling queue drains before each host command, which would narrow the window).
fn app() -> ClApp {
    ClApp::builder().use_env(true).build().expect("an OpenCL device for the tests")
}

/// Whether the device computes on the host at all (CPU devices only): elsewhere the tests have nothing to race.
fn on_a_cpu(app: &ClApp) -> bool {
    app.device().kind == DeviceKind::Cpu
}

/// Deterministic positive values in [0.5, 1.5).
fn positive(n: usize, seed: u64) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            0.5 + (state >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// Whether `got` is `want` to 1e-3 relative, element by element (see the module docs).
fn matches(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len() && got.iter().zip(want).all(|(g, w)| (g - w).abs() <= 1e-3 * w.abs())
}

/// Runs `compute(round)` for `ROUNDS` rounds on this thread while another reads `out` back until they are done;
/// every read must match `results[0]` or `results[1]` in full. Returns how many reads were made, or the first
/// read that matched neither (how many of its elements matched each result).
fn reads_while_computing(
    out: &XData<f32>,
    results: [&[f32]; 2],
    mut compute: impl FnMut(usize) -> cliper::Result<()>,
) -> Result<usize, String> {
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut reads = 0;
            while !done.load(Ordering::Acquire) {
                let got = out.to_vec().map_err(|e| e.to_string())?;
                reads += 1;
                if !results.iter().any(|want| matches(&got, want)) {
                    let agree =
                        |want: &[f32]| got.iter().zip(want).filter(|(g, w)| (*g - *w).abs() <= 1e-3 * w.abs()).count();
                    return Err(format!(
                        "read {reads} matches neither result: {} of {} elements match the first, {} the second",
                        agree(results[0]),
                        got.len(),
                        agree(results[1])
                    ));
                }
            }
            Ok(reads)
        });
        let computed = (0..ROUNDS).try_for_each(&mut compute).and_then(|()| out.app().finish());
        done.store(true, Ordering::Release);
        let reads = reader.join().map_err(|_| "the reader panicked".to_string())?;
        computed.map_err(|e| e.to_string())?;
        reads
    })
}

#[test]
fn a_host_gemm_is_never_read_half_written() {
    let app = app();
    if !on_a_cpu(&app) {
        eprintln!("skipped: {} is not a CPU device, MatMul never runs on the host", app.device().name);
        return;
    }
    // K spans several of gemm's blocks along K, so C holds partial sums while the host works.
    let (m, n, k) = (160, 160, 2048);
    let a_values = positive(m * k, 1);
    let b_values = [positive(k * n, 2), positive(k * n, 3).iter().map(|v| 2.0 * v + 1.0).collect()];
    let a = XData::from_slice(&app, &[m, k], &a_values).unwrap();
    let b = b_values.iter().map(|v| XData::from_slice(&app, &[k, n], v).unwrap()).collect::<Vec<_>>();
    let c = XData::<f32>::zeros(&app, &[m, n]).unwrap();
    let params = MatMulParams::default().strategy(GemmStrategy::Native);
    let mut products = b.iter().map(|b| MatMul::new(&a, b, &c, params)).collect::<Vec<_>>();
    let mut results = Vec::new();
    for product in &mut products {
        product.run().unwrap();
        assert_eq!(product.strategy(), Some(GemmStrategy::Native));
        results.push(c.to_vec().unwrap());
    }
    // The two results themselves, against float64: the bound of the module docs, (K + 2)·ε·(A·B)ᵢⱼ.
    for (values, result) in b_values.iter().zip(&results) {
        for (index, got) in result.iter().enumerate() {
            let (i, j) = (index / n, index % n);
            let exact: f64 = (0..k).map(|l| f64::from(a_values[i * k + l]) * f64::from(values[l * n + j])).sum();
            assert!(
                (f64::from(*got) - exact).abs() <= (k + 2) as f64 * f64::from(f32::EPSILON) / 2.0 * exact,
                "C[{i}, {j}] = {got}, float64 {exact}"
            );
        }
    }
    let reads = reads_while_computing(&c, [&results[0], &results[1]], |round| products[round % 2].launch()).unwrap();
    eprintln!("{reads} reads during {ROUNDS} rounds, each one result in full");
    assert!(reads >= 2, "the reader got only {reads} reads in: the test raced nothing");
}

#[test]
fn a_host_convolution_is_never_read_half_written() {
    let app = app();
    if !on_a_cpu(&app) {
        eprintln!("skipped: {} is not a CPU device, no convolution pass runs on the host", app.device().name);
        return;
    }
    let shape = [512, 512];
    let inputs = [positive(512 * 512, 4), positive(512 * 512, 5).iter().map(|v| 2.0 * v + 1.0).collect()];
    let x = inputs.iter().map(|v| XData::from_slice(&app, &shape, v).unwrap()).collect::<Vec<_>>();
    let out = XData::<f32>::zeros(&app, &shape).unwrap();
    let smooth = Filter::<f32>::gaussian(3.0, 2).unwrap();
    let mut passes = x.iter().map(|x| Convolution::new(x, &smooth, &out, ConvParams::default())).collect::<Vec<_>>();
    let mut results = Vec::new();
    for pass in &mut passes {
        pass.run().unwrap();
        let strategy = pass.strategy().map(|s| s.to_string()).unwrap_or_default();
        assert!(strategy.contains("on the host's threads"), "the convolution ran {strategy:?}, not on the host");
        results.push(out.to_vec().unwrap());
    }
    let reads = reads_while_computing(&out, [&results[0], &results[1]], |round| passes[round % 2].launch()).unwrap();
    eprintln!("{reads} reads during {ROUNDS} rounds, each one result in full");
    assert!(reads >= 2, "the reader got only {reads} reads in: the test raced nothing");
}
