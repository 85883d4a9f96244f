//! Reliability under load: one `ClApp` shared by 8 threads running different pipelines gives bit-identical
//! results to a single-threaded run; 10,000 launches leave device buffers and host memory where they started;
//! an allocation larger than the device allows is a typed error that leaves the `ClApp` usable.
//! docs/reliability.md records the figures these tests print.

mod common;
use cliper::prelude::*;
use common::*;
use num_complex::{Complex32, Complex64};

/// What every handle a user shares between threads must be.
#[test]
fn handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<ClApp>();
    send_sync::<XData<f32>>();
    send_sync::<XData<Complex64>>();
    send_sync::<KData<Complex32>>();
    send_sync::<Error>();
    send::<Pipeline>();
    send::<Box<dyn Process>>();
}

/// Four different pipelines on arrays of awkward sizes (real and complex, single and double), each built on
/// `app` from `seed`; returns the bits of every output after each of `reps` launches of the whole chain.
fn run_pipeline(app: &ClApp, kind: usize, seed: u64, reps: usize) -> Vec<Vec<u64>> {
    let mut rng = Rng::new(seed);
    let mut results = Vec::with_capacity(reps);
    macro_rules! upload {
        ($t:ty, $shape:expr) => {{
            let shape: &[usize] = &$shape;
            XData::<$t>::from_slice(app, shape, &rng.vec::<$t>(shape.iter().product())).unwrap()
        }};
    }
    match kind {
        // Transpose → 2-D Gaussian convolution (reflect border) → 2-norm, f32.
        0 => {
            let x = upload!(f32, [129, 257]);
            let t = XData::<f32>::zeros(app, &[257, 129]).unwrap();
            let c = XData::<f32>::zeros(app, &[257, 129]).unwrap();
            let n = XData::<f32>::zeros(app, &[]).unwrap();
            let filter = Filter::<f32>::gaussian(1.3, 2).unwrap();
            let mut chain = Pipeline::new(app)
                .then(Transpose::new(&x, &t))
                .then(Convolution::new(&t, &filter, &c, ConvParams::default().border(Border::Mirror)))
                .then(NormN::new(&c, &n, NormParams::new(NormOrder::P(2.0))));
            for _ in 0..reps {
                chain.run().unwrap();
                results.push(bits(&[c.to_vec().unwrap(), n.to_vec().unwrap()].concat()));
            }
        }
        // Complex matrix product → scaling, c32.
        1 => {
            let a = upload!(Complex32, [67, 129]);
            let b = upload!(Complex32, [129, 33]);
            let c = XData::<Complex32>::zeros(app, &[67, 33]).unwrap();
            let d = XData::<Complex32>::zeros(app, &[67, 33]).unwrap();
            let mut chain = Pipeline::new(app)
                .then(MatMul::new(&a, &b, &c, MatMulParams::default()))
                .then(ScalarMultiply::new(&c, &d, Complex32::new(0.5, -2.0)));
            for _ in 0..reps {
                chain.run().unwrap();
                results.push(bits_c(&d.to_vec().unwrap()));
            }
        }
        // Forward and inverse FFT over both axes, c64 (prime and smooth lengths).
        2 => {
            let x = upload!(Complex64, [7, 129]);
            let f = XData::<Complex64>::zeros(app, &[7, 129]).unwrap();
            let back = XData::<Complex64>::zeros(app, &[7, 129]).unwrap();
            let mut chain = Pipeline::new(app).then(Fft::new(&x, &f, FftParams::forward())).then(Fft::new(
                &f,
                &back,
                FftParams::inverse(),
            ));
            for _ in 0..reps {
                chain.run().unwrap();
                let mut out = f.to_vec().unwrap();
                out.extend(back.to_vec().unwrap());
                results.push(out.iter().flat_map(|z| [z.re.to_bits(), z.im.to_bits()]).collect());
            }
        }
        // Reflect padding → dot product with itself, f64.
        _ => {
            let x = upload!(f64, [129, 7]);
            let p = XData::<f64>::zeros(app, &[132, 12]).unwrap();
            let d = XData::<f64>::zeros(app, &[]).unwrap();
            let mut chain = Pipeline::new(app)
                .then(Pad::new(&x, &p, PadParams::new(&[(1, 2), (5, 0)]).border(Border::Mirror)))
                .then(Dot::new(&p, &p, &d, DotParams::default()));
            for _ in 0..reps {
                chain.run().unwrap();
                let mut out = p.to_vec().unwrap();
                out.extend(d.to_vec().unwrap());
                results.push(out.iter().map(|v| v.to_bits()).collect());
            }
        }
    }
    results
}

fn bits(v: &[f32]) -> Vec<u64> {
    v.iter().map(|x| u64::from(x.to_bits())).collect()
}

fn bits_c(v: &[Complex32]) -> Vec<u64> {
    v.iter().flat_map(|z| [u64::from(z.re.to_bits()), u64::from(z.im.to_bits())]).collect()
}

/// The thread model (docs/reliability.md): one context and one in-order queue per `ClApp`, shared by every
/// thread through its `Arc`; OpenCL makes enqueueing thread-safe, each process owns its kernel objects (whose
/// arguments are the only state a launch sets), and the program cache builds each program once under a lock.
#[test]
fn eight_threads_on_one_clapp_match_a_single_threaded_run_bit_for_bit() {
    let app = app();
    const THREADS: usize = 8;
    const REPS: usize = 12;
    let reference: Vec<Vec<u64>> =
        (0..THREADS).map(|t| run_pipeline(app, t % 4, 100 + t as u64, 1).remove(0)).collect();
    let before = app.memory_stats();
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            (0..THREADS).map(|t| scope.spawn(move || (t, run_pipeline(app, t % 4, 100 + t as u64, REPS)))).collect();
        for handle in handles {
            let (t, runs) = handle.join().expect("a thread panicked");
            for (rep, got) in runs.iter().enumerate() {
                assert!(
                    got == &reference[t],
                    "thread {t} (pipeline {}) launch {rep} differs from the single run",
                    t % 4
                );
            }
        }
    });
    let after = app.memory_stats();
    assert_eq!((after.live_buffers, after.live_bytes), (before.live_buffers, before.live_bytes));
    eprintln!("{THREADS} threads × {REPS} launches of 4 pipelines: bit-identical; {after:?}");
}

/// Resident host memory of this process, in KiB (Linux).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// 10,000 process launches: 100 rounds, each building a fresh 4-stage cascade (new arrays, new processes,
/// programs from the cache) and running it 25 times. Device buffers must return to the baseline after every
/// round and host memory must stay flat: after the first rounds (programs built, allocator warm) RSS may not
/// grow by more than 8 MiB, while a leak of one 257×129 f32 array per round would add 13 MiB.
#[test]
fn ten_thousand_launches_return_device_and_host_memory_to_baseline() {
    let app = ClApp::builder().use_env(true).build().unwrap();
    const ROUNDS: usize = 100;
    const RUNS: usize = 25;
    let baseline = app.memory_stats();
    let mut rng = Rng::new(7);
    let data: Vec<f32> = rng.vec(129 * 257);
    let filter = Filter::<f32>::gaussian(1.0, 2).unwrap();
    let mut launches = 0;
    let mut first_norm = None;
    let mut warm_rss = 0;
    for round in 0..ROUNDS {
        {
            let x = XData::from_slice(&app, &[129, 257], &data).unwrap();
            let t = XData::<f32>::zeros(&app, &[257, 129]).unwrap();
            let c = XData::<f32>::zeros(&app, &[257, 129]).unwrap();
            let s = XData::<f32>::zeros(&app, &[257, 129]).unwrap();
            let n = XData::<f32>::zeros(&app, &[]).unwrap();
            let mut chain = Pipeline::new(&app)
                .then(Transpose::new(&x, &t))
                .then(Convolution::new(&t, &filter, &c, ConvParams::default().border(Border::ZERO)))
                .then(ScalarMultiply::new(&c, &s, 0.5))
                .then(NormN::new(&s, &n, NormParams::new(NormOrder::P(2.0))));
            for _ in 0..RUNS {
                chain.run().unwrap();
                launches += 4;
            }
            let norm = n.to_vec().unwrap()[0];
            assert_eq!(*first_norm.get_or_insert(norm), norm, "round {round} computed another norm");
            assert!(app.memory_stats().live_buffers > baseline.live_buffers);
        }
        let now = app.memory_stats();
        assert_eq!(
            (now.live_buffers, now.live_bytes),
            (baseline.live_buffers, baseline.live_bytes),
            "round {round} left device buffers alive"
        );
        if round == 9 {
            warm_rss = rss_kib();
        }
    }
    let end_rss = rss_kib();
    let stats = app.memory_stats();
    eprintln!(
        "{launches} launches: live buffers {} → {}, live bytes {} → {}, {} allocations, peak {} bytes; \
         RSS after 10 rounds {warm_rss} KiB, after {ROUNDS} {end_rss} KiB",
        baseline.live_buffers,
        stats.live_buffers,
        baseline.live_bytes,
        stats.live_bytes,
        stats.allocations,
        stats.peak_bytes
    );
    assert_eq!(launches, 10_000);
    assert!(end_rss <= warm_rss + 8 * 1024, "host memory grew from {warm_rss} KiB to {end_rss} KiB");
}

/// Asking for more than the device allows is `Error::OutOfMemory` naming the size and the limit, before the
/// driver sees it; nothing stays allocated and the same `ClApp` keeps working.
#[test]
fn an_allocation_beyond_the_device_is_a_typed_error_and_the_clapp_stays_usable() {
    let app = ClApp::builder().use_env(true).build().unwrap();
    let before = app.memory_stats();
    let max = app.device().max_alloc_bytes as usize;
    let elements = max / 4 + 1; // f32: one element past the limit
    let err = XData::<f32>::zeros(&app, &[elements]).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    assert!(text.contains(&(elements * 4).to_string()) && text.contains(&max.to_string()), "{text}");
    assert_eq!(app.memory_stats(), before, "a refused allocation changed the counts");

    // Still usable: a transpose on the same ClApp is right.
    let data: Vec<f32> = (0..7 * 129).map(|v| v as f32).collect();
    let x = XData::from_slice(&app, &[7, 129], &data).unwrap();
    let y = XData::<f32>::zeros(&app, &[129, 7]).unwrap();
    Pipeline::new(&app).then(Transpose::new(&x, &y)).run().unwrap();
    let got = y.to_vec().unwrap();
    assert!((0..129).all(|j| (0..7).all(|i| got[j * 7 + i] == data[i * 129 + j])));
}

/// The device's global memory, asked for in pieces each under the one-allocation limit: the piece that would
/// take the total past it is refused (`OutOfMemory` naming the global size), and after the pieces are dropped
/// the device works as before. Run on devices whose driver allocates lazily or on the device itself — on PoCL
/// pieces are host memory, so this test runs only where `CLIPER_OVERCOMMIT_TEST=1` says the machine can take it.
#[test]
fn allocations_past_global_memory_are_refused_with_the_size() {
    if std::env::var_os("CLIPER_OVERCOMMIT_TEST").is_none() {
        eprintln!("skipped: set CLIPER_OVERCOMMIT_TEST=1 on a GPU machine to allocate its whole memory");
        return;
    }
    let app = ClApp::builder().use_env(true).build().unwrap();
    let info = app.device().clone();
    let piece = (info.max_alloc_bytes as usize / 4) * 4;
    let mut held = Vec::new();
    let err = loop {
        match XData::<f32>::zeros(&app, &[piece / 4]) {
            Ok(x) => held.push(x),
            Err(e) => break e,
        }
        assert!(held.len() <= 64, "{} pieces of {piece} bytes fit in {} bytes", held.len(), info.global_mem_bytes);
    };
    let text = err.to_string();
    eprintln!("after {} pieces of {piece} bytes: {text}", held.len());
    assert!(matches!(err, Error::OutOfMemory { .. }) || matches!(err, Error::Cl { .. }), "{err:?}");
    assert!(text.contains(&piece.to_string()), "{text}");
    drop(held);
    assert_eq!(app.memory_stats().live_bytes, 0);
    let x = XData::from_slice(&app, &[3], &[1.0f32, 2.0, 3.0]).unwrap();
    let y = XData::<f32>::zeros(&app, &[3]).unwrap();
    Pipeline::new(&app).then(ScalarMultiply::new(&x, &y, 2.0)).run().unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![2.0, 4.0, 6.0]);
}
