//! Arrays past 2³¹ elements (64-bit indexing): transpose, norm and convolution on a device with the memory for
//! them (two 8.6 GB f32 arrays at a time). Ignored by default — PoCL on a 24 GiB machine cannot hold them — and
//! run on the H100 with `CLIPER_DEVICE=gpu cargo test --release --test huge -- --ignored` (docs/reliability.md).
//!
//! Values come from a hash of the element's flat index, so the host never keeps a reference array: every
//! expected value is recomputed from its index, in float64, on all host cores.

mod common;
use cliper::prelude::*;

const TWO_31: usize = 1 << 31;

/// The value at flat index `i`: one of 4093 values in [-0.5, 0.5), exact in f32.
fn value(i: usize) -> f32 {
    ((i as u64).wrapping_mul(2_654_435_761) % 4093) as f32 / 4093.0 - 0.5
}

/// `f(i)` for every index, in parallel.
fn generate(n: usize) -> Vec<f32> {
    let mut v = vec![0f32; n];
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let chunk = n.div_ceil(threads);
    std::thread::scope(|s| {
        for (c, part) in v.chunks_mut(chunk).enumerate() {
            s.spawn(move || part.iter_mut().enumerate().for_each(|(k, x)| *x = value(c * chunk + k)));
        }
    });
    v
}

/// Runs `check(start, part)` on chunks of `v` in parallel and returns how many elements failed.
fn count_failures(v: &[f32], check: impl Fn(usize, f32) -> bool + Sync) -> usize {
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let chunk = v.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = v
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                let check = &check;
                s.spawn(move || part.iter().enumerate().filter(|&(k, &x)| !check(c * chunk + k, x)).count())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

fn gpu() -> ClApp {
    let app = ClApp::builder().use_env(true).build().unwrap();
    eprintln!(
        "{}: {} bytes global, {} per allocation",
        app.device().name,
        app.device().global_mem_bytes,
        app.device().max_alloc_bytes
    );
    app
}

/// Zeroing 2³¹ + 3 f32 (NVIDIA's fill counts 4-byte patterns in 32 bits: see `fill_zero_in_pieces`), and a
/// device-to-device copy of 8.6 GB (StridedCopy of contiguous arrays is one `clEnqueueCopyBuffer`).
#[test]
#[ignore = "needs a device with 20 GB of memory: run with --ignored on the H100"]
fn zeros_and_copies_past_two_to_the_31_elements() {
    let app = gpu();
    let count = TWO_31 + 3;
    let z = XData::<f32>::zeros(&app, &[count]).unwrap();
    app.finish().unwrap();
    let tail = z.slice_axis(0, count - 1000..count).unwrap().to_vec().unwrap();
    assert!(tail.iter().all(|&v| v == 0.0), "the end of a zeroed array is not zero");
    let host = generate(count);
    let x = XData::from_slice(&app, &[count], &host).unwrap();
    drop(host);
    Pipeline::new(&app).then(StridedCopy::new(&x, &z, CopyParams::default())).run().unwrap();
    let got = z.to_vec().unwrap();
    let bad = count_failures(&got, |k, v| v == value(k));
    assert_eq!(bad, 0, "{bad} copied elements are wrong");
}

/// A batch of 2 transposes of 32771² f32 (2,147,876,882 elements, 8.6 GB each way), checked element by element;
/// then the 2-norm of the same 2³¹-plus elements against a float64 sum.
#[test]
#[ignore = "needs a device with 20 GB of memory: run with --ignored on the H100"]
fn transpose_and_norm_past_two_to_the_31_elements() {
    let app = gpu();
    let n = 32771;
    let shape = [2, n, n];
    let count = 2 * n * n;
    assert!(count > TWO_31);
    let host = generate(count);
    let x = XData::from_slice(&app, &shape, &host).unwrap();
    drop(host);
    let y = XData::<f32>::zeros(&app, &shape).unwrap();
    let norm = XData::<f32>::zeros(&app, &[]).unwrap();
    let start = std::time::Instant::now();
    Pipeline::new(&app)
        .then(Transpose::new(&x, &y))
        .then(NormN::new(&x, &norm, NormParams::new(NormOrder::P(2.0))))
        .run()
        .unwrap();
    app.finish().unwrap();
    eprintln!("transpose + norm of {count} elements: {:?} (including the first build)", start.elapsed());
    let got = y.to_vec().unwrap();
    // y[b, j, i] = x[b, i, j]
    let bad = count_failures(&got, |k, v| {
        let (b, rest) = (k / (n * n), k % (n * n));
        let (j, i) = (rest / n, rest % n);
        v == value(b * n * n + i * n + j)
    });
    assert_eq!(bad, 0, "{bad} transposed elements are wrong");
    drop(got);
    // Float64 reference; f32 partial sums over 2³¹ squares of values in [-0.5, 0.5) keep about 6 digits after
    // the tree reduction, so 1e-5 relative is a loose bound that a lost or doubled block (≥ 1e-4) fails.
    let threads = 16;
    let chunk = count.div_ceil(threads);
    let sum: f64 = std::thread::scope(|s| {
        let parts: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    (t * chunk..((t + 1) * chunk).min(count)).map(|i| f64::from(value(i)).powi(2)).sum::<f64>()
                })
            })
            .collect();
        parts.into_iter().map(|h| h.join().unwrap()).sum()
    });
    let expected = sum.sqrt();
    let got = f64::from(norm.to_vec().unwrap()[0]);
    eprintln!("norm {got} against {expected} (relative error {:.2e})", (got - expected).abs() / expected);
    assert!((got - expected).abs() <= 1e-5 * expected, "norm {got}, expected {expected}");
}

/// A 3×3 convolution (zero border, same size) of a 46341² f32 image (2,147,488,281 elements), checked in
/// float64 at 200,000 random points and along the last rows and columns, where flat indices pass 2³¹.
#[test]
#[ignore = "needs a device with 20 GB of memory: run with --ignored on the H100"]
fn convolution_past_two_to_the_31_elements() {
    let app = gpu();
    let n = 46341;
    let count = n * n;
    assert!(count > TWO_31);
    let host = generate(count);
    let x = XData::from_slice(&app, &[n, n], &host).unwrap();
    drop(host);
    let y = XData::<f32>::zeros(&app, &[n, n]).unwrap();
    let weights = vec![0.25f32, -0.5, 0.125, 1.0, 0.5, -0.25, 0.0625, 0.75, -1.0];
    let filter = Filter::new(&[3, 3], weights.clone()).unwrap();
    let start = std::time::Instant::now();
    Pipeline::new(&app)
        .then(Convolution::new(&x, &filter, &y, ConvParams::default().border(Border::ZERO)))
        .run()
        .unwrap();
    app.finish().unwrap();
    eprintln!("3×3 convolution of {count} elements: {:?} (including the first build)", start.elapsed());
    let got = y.to_vec().unwrap();
    // scipy.ndimage.convolve semantics: the filter is flipped; zero outside the image.
    let expected = |r: usize, c: usize| -> f64 {
        let mut s = 0f64;
        for (a, row) in weights.chunks(3).enumerate() {
            for (b, &w) in row.iter().enumerate() {
                let (rr, cc) = (r as i64 + 1 - a as i64, c as i64 + 1 - b as i64);
                if (0..n as i64).contains(&rr) && (0..n as i64).contains(&cc) {
                    s += f64::from(w) * f64::from(value(rr as usize * n + cc as usize));
                }
            }
        }
        s
    };
    let mut rng = common::Rng::new(31);
    let mut points: Vec<(usize, usize)> = (0..200_000).map(|_| (rng.below(n), rng.below(n))).collect();
    for k in 0..n {
        points.extend([(n - 1, k), (n - 2, k), (k, n - 1), (k, 0)]);
    }
    // Nine products of values ≤ 1 in magnitude, each rounded in f32: 1e-5 absolute is ample and a wrong
    // neighbour (differences of 1/4093 or more, times a weight ≥ 1/16) fails it.
    let wrong: Vec<_> = points
        .iter()
        .filter(|&&(r, c)| (f64::from(got[r * n + c]) - expected(r, c)).abs() > 1e-5)
        .take(5)
        .map(|&(r, c)| (r, c, got[r * n + c], expected(r, c)))
        .collect();
    assert!(wrong.is_empty(), "wrong outputs (row, column, got, expected): {wrong:?}");
    eprintln!("{} points checked, the last flat index {}", points.len(), count - 1);
}
