//! Fft against a float64 reference (rustfft, applied axis by axis on the host), c32 and c64, for the lengths the
//! issue names (1, 2, 3, 5, 7, 8, 16, 97, 128, 243, 1000, 1024 — smooth ones through Stockham passes, 97 and
//! other primes through Bluestein), in 1, 2 and 3 dimensions, over axis subsets (batches), with numpy's three
//! normalisations, strided input and output views, and forward→inverse round trips.
//!
//! Tolerance: relative RMS error (‖got − want‖₂ / ‖want‖₂) ≤ 1e-6 for c32 — the bound; a length-n
//! transform in float32 with float64 twiddles errs by about ε·√log₂n ≈ 2e-7 — and ≤ 1e-12 for c64.

mod common;
#[path = "fft/nufft.rs"]
mod nufft;
use cliper::prelude::*;
use common::*;
use ndarray::{ArrayD, Axis};
use num_complex::{Complex32, Complex64};
use rustfft::FftPlanner;

/// numpy.fft.fftn(x, axes=axes, norm=norm) (or ifftn) in float64.
fn reference(x: &ArrayD<Complex64>, axes: &[usize], direction: FftDirection, norm: FftNorm) -> ArrayD<Complex64> {
    let mut out = x.clone();
    let mut planner = FftPlanner::<f64>::new();
    for &a in axes {
        let n = out.shape()[a];
        let plan = match direction {
            FftDirection::Forward => planner.plan_fft_forward(n),
            FftDirection::Inverse => planner.plan_fft_inverse(n),
        };
        let scale = match (norm, direction) {
            (FftNorm::Ortho, _) => 1.0 / (n as f64).sqrt(),
            (FftNorm::Backward, FftDirection::Inverse) | (FftNorm::Forward, FftDirection::Forward) => 1.0 / n as f64,
            _ => 1.0,
        };
        for mut lane in out.lanes_mut(Axis(a)) {
            let mut buf: Vec<Complex64> = lane.iter().copied().collect();
            plan.process(&mut buf);
            for (d, v) in lane.iter_mut().zip(buf) {
                *d = v * scale;
            }
        }
    }
    out
}

fn relative_rms(got: &ArrayD<Complex64>, want: &ArrayD<Complex64>) -> f64 {
    let err: f64 = got.iter().zip(want.iter()).map(|(g, w)| (g - w).norm_sqr()).sum();
    let size: f64 = want.iter().map(|w| w.norm_sqr()).sum();
    if size == 0.0 { err.sqrt() } else { (err / size).sqrt() }
}

/// The ways to run a transform that every check covers: what the planner picks here, the kernels' global passes
/// (what CPU devices ran before the host path; GPUs pick local memory, which a test below covers), and rustfft on
/// the host's threads (what CPU devices pick; on a GPU through mapped copies).
const ALGORITHMS: [FftAlgorithm; 3] = [FftAlgorithm::Auto, FftAlgorithm::GlobalPasses, FftAlgorithm::Host];

fn tolerance<T: Element>() -> f64 {
    if T::IS_DOUBLE { 1e-12 } else { 1e-6 }
}

/// Transforms a random array of `shape` over `axes` and compares with the reference.
fn check<T: cliper::ComplexElement>(
    seed: u64,
    shape: &[usize],
    axes: Option<&[usize]>,
    direction: FftDirection,
    norm: FftNorm,
) {
    for algorithm in ALGORITHMS {
        check_with::<T>(seed, shape, axes, direction, norm, algorithm);
    }
}

fn check_with<T: cliper::ComplexElement>(
    seed: u64,
    shape: &[usize],
    axes: Option<&[usize]>,
    direction: FftDirection,
    norm: FftNorm,
    algorithm: FftAlgorithm,
) {
    let mut rng = Rng::new(seed);
    let (x, host) = random::<T>(&mut rng, shape);
    let y = poisoned::<T>(shape);
    let params = FftParams::new(direction).norm(norm).algorithm(algorithm);
    let mut fft = Fft::new(&x, &y, if let Some(a) = axes { params.axes(a) } else { params });
    fft.init().unwrap();
    fft.launch().unwrap();
    let all: Vec<usize> = (0..shape.len()).collect();
    let want = reference(&host, axes.unwrap_or(&all), direction, norm);
    let err = relative_rms(&fetch(&y), &want);
    assert!(
        err <= tolerance::<T>(),
        "{} {shape:?} axes {axes:?} {direction:?} {norm:?} {algorithm:?}: relative RMS error {err:.2e} ({:?})",
        T::NAME,
        fft.strategy()
    );
}

#[test]
fn one_dimensional_lengths_match_numpy() {
    for (i, n) in [1usize, 2, 3, 5, 7, 8, 16, 97, 128, 243, 1000, 1024, 1031, 4096].into_iter().enumerate() {
        check::<Complex32>(i as u64, &[n], None, FftDirection::Forward, FftNorm::Backward);
        check::<Complex64>(100 + i as u64, &[n], None, FftDirection::Forward, FftNorm::Backward);
        check::<Complex32>(200 + i as u64, &[n], None, FftDirection::Inverse, FftNorm::Backward);
    }
}

#[test]
fn global_passes_and_local_memory_agree_with_numpy() {
    // Both ways to run the passes whatever the planner picks on this device, over the last axis (rows) and a
    // middle axis (columns), smooth and Bluestein lengths. Lengths too long for one work-group take the four-step
    // split when local memory is asked for: with 47 KiB, rows above 8192 in c32 and 4096 in c64, columns above
    // 2048 in c32 (4 adjacent columns must fit); with Hopper's 160 KiB, rows above 16384 in c32 (65536 here).
    for (i, (shape, axes)) in [
        (vec![5usize, 1000], vec![1usize]),
        (vec![97, 6, 3], vec![0, 1]),
        (vec![3, 4096], vec![1]),
        (vec![8192], vec![0]),
        (vec![16384], vec![0]),
        (vec![65536], vec![0]),
        (vec![2053, 3], vec![0]),
        (vec![6144, 3], vec![0]),
        (vec![2, 5, 4100], vec![2]),
    ]
    .into_iter()
    .enumerate()
    {
        for algorithm in [FftAlgorithm::LocalMemory, FftAlgorithm::GlobalPasses] {
            check_with::<Complex32>(i as u64, &shape, Some(&axes), FftDirection::Forward, FftNorm::Backward, algorithm);
            check_with::<Complex32>(
                20 + i as u64,
                &shape,
                Some(&axes),
                FftDirection::Inverse,
                FftNorm::Backward,
                algorithm,
            );
            check_with::<Complex64>(
                9 + i as u64,
                &shape,
                Some(&axes),
                FftDirection::Inverse,
                FftNorm::Ortho,
                algorithm,
            );
        }
    }
}

#[test]
fn long_axes_split_and_bluestein_runs_in_one_launch() {
    // 8192-point c32 rows fit one work-group (with 47 KiB of local memory, real and imaginary parts exchanged in
    // turn); 65536 fit no device's budget and split into two register transforms and a transpose. Columns of
    // 65536 split too, the second part writing the transposed positions itself.
    let strategy = |shape: &[usize], axes: &[usize]| {
        let x = XData::<Complex32>::zeros(app(), shape).unwrap();
        let y = XData::<Complex32>::zeros(app(), shape).unwrap();
        let mut fft = Fft::new(&x, &y, FftParams::forward().axes(axes).algorithm(FftAlgorithm::LocalMemory));
        fft.init().unwrap();
        fft.strategy().unwrap().to_string()
    };
    let rows = strategy(&[8192], &[0]);
    assert!(rows.contains("in registers") && !rows.contains("four-step"), "{rows}");
    let long = strategy(&[65536], &[0]);
    assert!(long.contains("four-step 256×256") && long.ends_with("+ transpose"), "{long}");
    let columns = strategy(&[65536, 3], &[0]);
    assert!(columns.contains("four-step") && !columns.contains("transpose"), "{columns}");
    // Bluestein in one launch: rows, columns that fit (m = 196 for 97) and columns that do not (m = 4116 for
    // 2053, transposed to rows and back); the tests above check their values.
    let rows = strategy(&[5, 97], &[1]);
    assert!(rows.contains("Bluestein m=196") && rows.contains("in registers"), "{rows}");
    let columns = strategy(&[97, 6, 3], &[0]);
    assert!(columns.contains("in registers") && !columns.contains("transposed"), "{columns}");
    let transposed = strategy(&[2053, 3], &[0]);
    assert!(transposed.contains("in registers") && transposed.contains("transposed to rows"), "{transposed}");
}

#[test]
fn every_length_up_to_300_in_float32() {
    // Every radix combination and many Bluestein sizes (all primes to 300) in one batch per length.
    for n in 1..=300usize {
        check::<Complex32>(1000 + n as u64, &[3, n], Some(&[1]), FftDirection::Forward, FftNorm::Backward);
    }
}

#[test]
fn several_axes_batches_and_normalisations() {
    let cases: [(&[usize], Option<&[usize]>); 8] = [
        (&[16, 97], None),
        (&[7, 128], None),
        (&[5, 8, 243], None),
        (&[6, 7, 9], Some(&[0, 2])),
        (&[4, 1000], Some(&[1])),
        (&[129, 3], Some(&[0])),
        (&[2, 1, 5, 3], Some(&[1, 2])),
        (&[11, 13, 2], Some(&[2, 0])),
    ];
    for (i, (shape, axes)) in cases.into_iter().enumerate() {
        for (j, norm) in [FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward].into_iter().enumerate() {
            for direction in [FftDirection::Forward, FftDirection::Inverse] {
                let seed = (i * 10 + j) as u64;
                check::<Complex32>(seed, shape, axes, direction, norm);
                check::<Complex64>(seed + 500, shape, axes, direction, norm);
            }
        }
    }
}

#[test]
fn strided_views_in_and_out() {
    for algorithm in ALGORITHMS {
        strided_views_with(algorithm);
    }
}

fn strided_views_with(algorithm: FftAlgorithm) {
    let mut rng = Rng::new(77);
    // A transposed input view and an output that is a column slice of a bigger array.
    let (x, host) = random::<Complex32>(&mut rng, &[97, 24]);
    let xt = x.t();
    let big = poisoned::<Complex32>(&[24, 100]);
    let y = big.slice_axis(1, 2..99).unwrap();
    let mut fft = Fft::new(&xt, &y, FftParams::forward().algorithm(algorithm));
    fft.init().unwrap();
    fft.launch().unwrap();
    let want = reference(&host.t().to_owned(), &[0, 1], FftDirection::Forward, FftNorm::Backward);
    let err = relative_rms(&fetch(&y), &want);
    assert!(err <= 1e-6, "strided {algorithm:?}: {err:.2e}");
    // The columns outside the view are untouched.
    let whole = fetch(&big);
    assert!(
        whole
            .index_axis(Axis(1), 0)
            .iter()
            .chain(whole.index_axis(Axis(1), 99).iter())
            .all(|v| *v == Complex64::new(1234.5, -987.25))
    );
}

#[test]
fn round_trips_are_the_identity() {
    let mut rng = Rng::new(5);
    for shape in [&[1000usize][..], &[61, 64], &[3, 97, 10]] {
        let (x, host) = random::<Complex64>(&mut rng, shape);
        let spectrum = Fft::apply(&x, FftParams::forward()).unwrap();
        let back = Fft::apply(&spectrum, FftParams::inverse()).unwrap();
        let err = relative_rms(&fetch(&back), &host);
        assert!(err <= 1e-13, "{shape:?}: {err:.2e}");
    }
}

#[test]
fn in_place_and_repeated_launches() {
    for algorithm in ALGORITHMS {
        let mut rng = Rng::new(9);
        let (x, host) = random::<Complex32>(&mut rng, &[8, 243]);
        let mut fft = Fft::new(&x, &x, FftParams::forward().axes(&[1]).algorithm(algorithm));
        fft.init().unwrap();
        fft.launch().unwrap();
        let once = reference(&host, &[1], FftDirection::Forward, FftNorm::Backward);
        assert!(relative_rms(&fetch(&x), &once) <= 1e-6, "{algorithm:?}");
        fft.launch().unwrap();
        let twice = reference(&once, &[1], FftDirection::Forward, FftNorm::Backward);
        assert!(relative_rms(&fetch(&x), &twice) <= 1e-6, "{algorithm:?}");
        // Two views of one array that do not overlap: the first row's transform into the second row.
        let (z, hz) = random::<Complex64>(&mut rng, &[2, 3, 97]);
        let (from, to) = (z.index_axis(0, 0).unwrap(), z.index_axis(0, 1).unwrap());
        Fft::new(&from, &to, FftParams::inverse().algorithm(algorithm)).run().unwrap();
        let first = hz.index_axis(Axis(0), 0).to_owned();
        let want = reference(&first, &[0, 1], FftDirection::Inverse, FftNorm::Backward);
        let all = fetch(&z);
        assert!(relative_rms(&all.index_axis(Axis(0), 1).to_owned(), &want) <= 1e-12, "{algorithm:?}");
        assert_eq!(all.index_axis(Axis(0), 0), first, "{algorithm:?}: the input row changed");
    }
}

#[test]
fn bad_arguments_are_errors() {
    let x = XData::<Complex32>::zeros(app(), &[4, 5]).unwrap();
    let wrong = XData::<Complex32>::zeros(app(), &[5, 4]).unwrap();
    let e = Fft::new(&x, &wrong, FftParams::forward()).init().unwrap_err().to_string();
    assert!(e.contains("[4, 5]") && e.contains("[5, 4]"), "{e}");
    let y = XData::<Complex32>::zeros(app(), &[4, 5]).unwrap();
    let e = Fft::new(&x, &y, FftParams::forward().axes(&[2])).init().unwrap_err().to_string();
    assert!(e.contains("axis 2") && e.contains("[4, 5]"), "{e}");
    let e = Fft::new(&x, &y, FftParams::forward().axes(&[1, 1])).init().unwrap_err().to_string();
    assert!(e.contains("twice"), "{e}");
    let mut f = Fft::new(&x, &y, FftParams::forward());
    assert!(f.launch().is_err(), "launch before init");
    // Empty arrays transform to empty arrays.
    let empty = XData::<Complex64>::zeros(app(), &[0, 3]).unwrap();
    assert_eq!(Fft::apply(&empty, FftParams::forward()).unwrap().shape(), &[0, 3]);
}

/// numpy.fft.rfftn: the complex transform of real data, last transformed axis cut to n/2 + 1.
fn rfftn_reference(x: &ArrayD<Complex64>, axes: &[usize], norm: FftNorm) -> ArrayD<Complex64> {
    let full = reference(x, axes, FftDirection::Forward, norm);
    let last = axes[axes.len() - 1];
    full.slice_axis(Axis(last), ndarray::Slice::from(..x.shape()[last] / 2 + 1)).to_owned()
}

#[test]
fn real_transforms_match_numpy_rfftn_and_irfftn() {
    use cliper::{InverseRealFft, RealFft};
    let mut rng = Rng::new(31);
    for (shape, axes) in [
        (vec![16usize], None),
        (vec![7], None),
        (vec![97], None),
        (vec![6, 10], None),
        (vec![5, 9, 3], Some(vec![0, 1])),
        (vec![4, 129], Some(vec![1])),
    ] {
        let all: Vec<usize> = (0..shape.len()).collect();
        let ax = axes.clone().unwrap_or(all);
        let last = ax[ax.len() - 1];
        for norm in [FftNorm::Backward, FftNorm::Ortho] {
            // Forward, c32 and c64.
            let (x, hx) = random::<f32>(&mut rng, &shape);
            let params = match &axes {
                Some(a) => RealFftParams::default().axes(a).norm(norm),
                None => RealFftParams::default().norm(norm),
            };
            let out_shape = RealFft::<Complex32>::output_shape(&shape, &params).unwrap();
            assert_eq!(out_shape[last], shape[last] / 2 + 1);
            let y = poisoned::<Complex32>(&out_shape);
            let mut f = RealFft::new(&x, &y, params.clone());
            f.init().unwrap();
            f.launch().unwrap();
            let want = rfftn_reference(&hx, &ax, norm);
            let err = relative_rms(&fetch(&y), &want);
            assert!(err <= 1e-6, "rfftn {shape:?} {axes:?} {norm:?}: {err:.2e}");
            // Back: irfftn of that half spectrum with the original lengths gives x again (odd lengths too).
            let (x64, hx64) = random::<f64>(&mut rng, &shape);
            let half = XData::<Complex64>::zeros(app(), &out_shape).unwrap();
            let mut f = RealFft::new(&x64, &half, params.clone());
            let xb = XData::<f64>::zeros(app(), &shape).unwrap();
            let mut back = InverseRealFft::new(&half, &xb, params);
            f.init().unwrap();
            f.launch().unwrap();
            back.init().unwrap();
            back.launch().unwrap();
            let got = fetch(&xb);
            let err = relative_rms(&got, &hx64);
            assert!(err <= 1e-12, "irfftn(rfftn) {shape:?} {axes:?} {norm:?}: {err:.2e}");
        }
    }
    // numpy ignores the imaginary parts of the zero and Nyquist terms: so does InverseRealFft.
    let half = XData::from_slice(
        app(),
        &[3],
        &[Complex64::new(10.0, 5.0), Complex64::new(-2.0, 2.0), Complex64::new(-2.0, -7.0)],
    )
    .unwrap();
    let x = XData::<f64>::zeros(app(), &[4]).unwrap();
    let mut f = InverseRealFft::new(&half, &x, RealFftParams::default());
    f.init().unwrap();
    f.launch().unwrap();
    let got = x.to_vec().unwrap();
    assert!(got.iter().zip([1.0, 2.0, 3.0, 4.0]).all(|(a, b)| (a - b).abs() < 1e-12), "{got:?}");
    // Wrong output shapes name both shapes.
    let r = XData::<f32>::zeros(app(), &[8]).unwrap();
    let c = XData::<Complex32>::zeros(app(), &[8]).unwrap();
    let e = RealFft::new(&r, &c, RealFftParams::default()).init().unwrap_err().to_string();
    assert!(e.contains("[5]") && e.contains("[8]"), "{e}");
}
