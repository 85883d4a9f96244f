//! Convolution, SeparableConvolution and Filter against a float64 reference written from scipy.ndimage's
//! definitions (`correlate`/`convolve` with their centring and `origin` rule, numpy's `valid`/`full`), for
//! every border mode, the filters named in the issue, batches, complex data, stride and dilation.
//!
//! Tolerance, per output: 2·((t + 4)·Σ|w| + 32·t·max|w|)·ε·m, with t the number of taps, ε the unit roundoff of
//! the element's real type and m the largest |input| (or |border constant|). A sum of t products accumulated in
//! order is within (t + 2)·ε·Σ|wⱼ||xⱼ| of the exact value (+2 for a complex product); separable passes add the
//! rank-1 factorisation's error, at most 32·ε·max|w| per weight (Filter::separate's acceptance test); the
//! factor 2 covers complex magnitudes. A missing, doubled or misplaced tap errs by about |w|·|x|, orders of
//! magnitude above this.

mod common;
use cliper::prelude::*;
use common::*;
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

const BORDERS: [Border; 5] = [Border::Constant(0.75), Border::Nearest, Border::Mirror, Border::Reflect, Border::Wrap];

/// Everything the reference needs besides the data.
#[derive(Clone, Debug)]
struct Spec {
    mode: ConvMode,
    output: ConvOutput,
    border: Border,
    origin: Vec<isize>,
    stride: Vec<usize>,
    dilation: Vec<usize>,
}

impl Spec {
    fn new(mode: ConvMode, output: ConvOutput, border: Border) -> Spec {
        Spec { mode, output, border, origin: vec![], stride: vec![], dilation: vec![] }
    }
    fn params(&self) -> ConvParams {
        ConvParams::default()
            .mode(self.mode)
            .output(self.output)
            .border(self.border)
            .origin(&self.origin)
            .stride(&self.stride)
            .dilation(&self.dilation)
    }
}

fn axis_value<V: Copy>(v: &[V], k: usize, default: V) -> V {
    match v.len() {
        0 => default,
        1 => v[0],
        _ => v[k],
    }
}

/// scipy.ndimage semantics in float64, straight from the definitions (per axis, with w the filter extent,
/// d the dilation, W = (w−1)·d + 1 and o the origin):
///   same, correlate:  out[i] = Σⱼ w[j]·x[i·s + j·d − (W/2 + o)]
///   same, convolve:   out[i] = Σⱼ w[j]·x[i·s − j·d + W/2 + o]
///   valid:            correlate x[i·s + j·d],  convolve x[i·s + (w−1−j)·d]
///   full:             correlate x[i·s + j·d − (W−1)],  convolve x[i·s − j·d]
/// (checked against scipy.ndimage.correlate1d/convolve1d and numpy.convolve/correlate on random cases while
/// writing this test), with x outside its extent read through the border rule.
fn conv_ref(x: &ArrayD<Complex64>, fshape: &[usize], w: &[Complex64], spec: &Spec) -> ArrayD<Complex64> {
    let r = fshape.len();
    let lead = x.ndim() - r;
    let conv = spec.mode == ConvMode::Convolution;
    let mut out_shape = x.shape()[..lead].to_vec();
    let mut geo = Vec::new(); // (n, w, d, s, o, W)
    for (k, &wk) in fshape.iter().enumerate() {
        let n = x.shape()[lead + k];
        let (d, s, o) =
            (axis_value(&spec.dilation, k, 1), axis_value(&spec.stride, k, 1), axis_value(&spec.origin, k, 0));
        let span = (wk - 1) * d + 1;
        let count = match spec.output {
            ConvOutput::Same => n,
            ConvOutput::Valid => (n + 1).saturating_sub(span),
            ConvOutput::Full => n + span - 1,
        };
        out_shape.push(count.div_ceil(s));
        geo.push((n as i64, wk as i64, d as i64, s as i64, o as i64, span as i64));
    }
    let fill = Complex64::new(if let Border::Constant(v) = spec.border { v } else { 0.0 }, 0.0);
    let taps: Vec<Vec<usize>> = (0..w.len())
        .map(|t| (0..r).map(|k| t / fshape[k + 1..].iter().product::<usize>() % fshape[k]).collect())
        .collect();
    ArrayD::from_shape_fn(IxDyn(&out_shape), |idx| {
        let mut acc = Complex64::default();
        'tap: for (t, j) in taps.iter().enumerate() {
            let mut src: Vec<usize> = (0..lead).map(|k| idx[k]).collect();
            for k in 0..r {
                let (n, wk, d, s, o, span) = geo[k];
                let (i, j) = (idx[lead + k] as i64 * s, j[k] as i64);
                let p = match (spec.output, conv) {
                    (ConvOutput::Same, false) => i + j * d - (span / 2 + o),
                    (ConvOutput::Same, true) => i - j * d + span / 2 + o,
                    (ConvOutput::Valid, false) => i + j * d,
                    (ConvOutput::Valid, true) => i + (wk - 1 - j) * d,
                    (ConvOutput::Full, false) => i + j * d - (span - 1),
                    (ConvOutput::Full, true) => i - j * d,
                };
                match border_source(spec.border, p, n) {
                    Some(q) => src.push(q as usize),
                    None => {
                        acc += w[t] * fill;
                        continue 'tap;
                    }
                }
            }
            acc += w[t] * x[IxDyn(&src)];
        }
        acc
    })
}

fn tolerance<T: Element>(w: &[Complex64], xmax: f64) -> f64 {
    let t = w.len() as f64;
    let sum: f64 = w.iter().map(|v| v.norm()).sum();
    let peak = w.iter().fold(0.0f64, |m, v| m.max(v.norm()));
    2.0 * ((t + 4.0) * sum + 32.0 * t * peak) * eps::<T>() * xmax
}

fn assert_close(got: &ArrayD<Complex64>, want: &ArrayD<Complex64>, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes differ");
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        assert!((g - w).norm() <= tol, "{what}: element {i} (row-major) is {g}, expected {w} (tolerance {tol:e})");
    }
}

/// Runs one convolution of random data of `shape` with `filter` and checks it; returns the planner's choice.
fn check<T: Element, K: cliper::FilterElement<T>>(
    rng: &mut Rng,
    shape: &[usize],
    filter: &Filter<K>,
    spec: &Spec,
    params: ConvParams,
) -> ConvStrategy {
    let (x, host) = random::<T>(rng, shape);
    let out_shape = Convolution::<T, K>::output_shape(shape, filter.shape(), &params).unwrap();
    let w: Vec<Complex64> = filter.values().iter().map(|v| v.to_c64()).collect();
    let want = conv_ref(&host, filter.shape(), &w, spec);
    let xmax = host.iter().fold(border_magnitude(spec.border), |m, v| m.max(v.norm()));
    let run = |params: ConvParams| {
        let out = poisoned::<T>(&out_shape);
        let mut conv = Convolution::new(&x, filter, &out, params);
        conv.init().unwrap_or_else(|e| panic!("init {shape:?} {:?} {spec:?}: {e}", filter.shape()));
        conv.launch().unwrap();
        let what = format!("{} {shape:?} filter {:?} {spec:?} {:?}", T::NAME, filter.shape(), conv.strategy());
        assert_close(&fetch(&out), &want, tolerance::<T>(&w, xmax), &what);
        conv.strategy().unwrap()
    };
    let strategy = run(params.clone());
    // Where a CPU device ran passes on the host, the kernels the planner chooses elsewhere must agree too.
    if matches!(strategy, ConvStrategy::Host | ConvStrategy::Separable { host: 1.., .. }) {
        let kernels = run(params.kernels_only(true));
        assert!(!matches!(kernels, ConvStrategy::Host | ConvStrategy::Separable { host: 1.., .. }), "{kernels:?}");
    }
    strategy
}

fn random_filter<K: Element>(rng: &mut Rng, shape: &[usize]) -> Filter<K> {
    Filter::new(shape, rng.vec(shape.iter().product())).unwrap()
}

#[test]
fn named_filters_every_border_both_modes() {
    let mut rng = Rng::new(51);
    let gaussian = Filter::<f32>::gaussian(0.6, 2).unwrap(); // 5×5
    let filters = [
        Filter::<f32>::laplacian(),
        Filter::sobel_x(),
        Filter::sobel_y(),
        gaussian,
        random_filter(&mut rng, &[1, 7]),
        random_filter(&mut rng, &[4, 4]),
    ];
    for border in BORDERS {
        for (i, f) in filters.iter().enumerate() {
            let mode = if i % 2 == 0 { ConvMode::Convolution } else { ConvMode::Correlation };
            let spec = Spec::new(mode, ConvOutput::Same, border);
            // The planner's choice (tiled, or separable passes where they pay), then the direct kernel.
            check::<f32, f32>(&mut rng, &[37, 53], f, &spec, spec.params());
            let other = Spec::new(
                if mode == ConvMode::Convolution { ConvMode::Correlation } else { ConvMode::Convolution },
                ConvOutput::Same,
                border,
            );
            let direct = other.params().algorithm(ConvAlgorithm::Direct);
            assert_eq!(check::<f32, f32>(&mut rng, &[1, 29], f, &other, direct), ConvStrategy::Direct);
        }
    }
}

#[test]
fn large_and_oversized_filters() {
    let mut rng = Rng::new(52);
    let f15 = random_filter::<f32>(&mut rng, &[15, 15]);
    let big = random_filter::<f32>(&mut rng, &[13, 21]); // larger than the 9×11 image
    for border in [Border::Mirror, Border::Constant(-0.5), Border::Wrap] {
        let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, border);
        check::<f32, f32>(&mut rng, &[40, 33], &f15, &spec, spec.params());
        check::<f32, f32>(&mut rng, &[9, 11], &big, &spec, spec.params());
        let full = Spec::new(ConvMode::Correlation, ConvOutput::Full, border);
        check::<f32, f32>(&mut rng, &[9, 11], &big, &full, full.params());
    }
    let valid = Spec::new(ConvMode::Convolution, ConvOutput::Valid, Border::ZERO);
    let out = Convolution::<f32>::output_shape(&[9, 11], big.shape(), &valid.params()).unwrap();
    assert_eq!(out, vec![0, 0]);
    assert_eq!(check::<f32, f32>(&mut rng, &[9, 11], &big, &valid, valid.params()), ConvStrategy::Nothing);
}

#[test]
fn one_and_three_dimensional_filters_with_batches() {
    let mut rng = Rng::new(53);
    let f3 = random_filter::<f32>(&mut rng, &[3, 3, 3]);
    let f511 = random_filter::<f32>(&mut rng, &[5, 1, 1]);
    let f1 = random_filter::<f32>(&mut rng, &[6]);
    for border in [Border::Reflect, Border::Nearest, Border::Constant(0.75)] {
        let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, border);
        check::<f32, f32>(&mut rng, &[9, 7, 12], &f3, &spec, spec.params());
        check::<f32, f32>(&mut rng, &[9, 7, 12], &f3, &spec, spec.params().algorithm(ConvAlgorithm::Direct));
        check::<f32, f32>(&mut rng, &[2, 6, 5, 4], &f511, &spec, spec.params()); // batch of 2 volumes
        check::<f32, f32>(&mut rng, &[3, 2, 129], &f1, &spec, spec.params()); // 6 signals
        let sobel = Filter::<f32>::sobel_x();
        check::<f32, f32>(&mut rng, &[3, 19, 23], &sobel, &spec, spec.params().separable(false)); // 3 slices
    }
}

#[test]
fn valid_full_stride_dilation_origin() {
    let mut rng = Rng::new(54);
    let f = random_filter::<f32>(&mut rng, &[4, 3]);
    for output in [ConvOutput::Same, ConvOutput::Valid, ConvOutput::Full] {
        for mode in [ConvMode::Convolution, ConvMode::Correlation] {
            for (stride, dilation) in
                [(vec![1], vec![1]), (vec![2, 3], vec![1]), (vec![1], vec![2, 3]), (vec![3], vec![2])]
            {
                let mut spec = Spec::new(mode, output, Border::Mirror);
                spec.stride = stride;
                spec.dilation = dilation;
                check::<f32, f32>(&mut rng, &[23, 31], &f, &spec, spec.params());
                check::<f32, f32>(&mut rng, &[23, 31], &f, &spec, spec.params().algorithm(ConvAlgorithm::Direct));
            }
        }
    }
    // A rank-1 filter: separable passes (on the host's threads on CPU devices) with the same geometries.
    let rank1 = Filter::outer(&[random_filter::<f32>(&mut rng, &[4]), random_filter(&mut rng, &[3])]).unwrap();
    for output in [ConvOutput::Same, ConvOutput::Valid, ConvOutput::Full] {
        for (stride, dilation) in [(vec![2, 3], vec![1]), (vec![1], vec![2, 3]), (vec![3], vec![2])] {
            for border in [Border::Mirror, Border::Constant(-1.25)] {
                let mut spec = Spec::new(ConvMode::Convolution, output, border);
                spec.stride = stride.clone();
                spec.dilation = dilation.clone();
                // Asked for: on GPUs the planner would run a 4×3 filter in one pass.
                let separable = spec.params().algorithm(ConvAlgorithm::Separable);
                let how = check::<f32, f32>(&mut rng, &[2, 23, 31], &rank1, &spec, separable);
                assert!(matches!(how, ConvStrategy::Separable { passes: 2, .. }), "{how:?}");
            }
        }
    }
    for origin in [vec![-2, -1], vec![1, 1], vec![0, -1]] {
        for mode in [ConvMode::Convolution, ConvMode::Correlation] {
            let mut spec = Spec::new(mode, ConvOutput::Same, Border::Wrap);
            spec.origin = origin.clone();
            check::<f32, f32>(&mut rng, &[10, 7], &f, &spec, spec.params());
        }
    }
}

#[test]
fn complex_data_with_real_and_complex_filters_and_doubles() {
    let mut rng = Rng::new(55);
    for border in [Border::Mirror, Border::Constant(0.75)] {
        let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, border);
        let real = random_filter::<f32>(&mut rng, &[3, 5]);
        check::<Complex32, f32>(&mut rng, &[2, 17, 9], &real, &spec, spec.params());
        let complex = random_filter::<Complex32>(&mut rng, &[5, 2]);
        check::<Complex32, Complex32>(&mut rng, &[17, 9], &complex, &spec, spec.params());
        let double = random_filter::<f64>(&mut rng, &[7]);
        check::<f64, f64>(&mut rng, &[4, 65], &double, &spec, spec.params());
        let zz = random_filter::<Complex64>(&mut rng, &[2, 3, 2]);
        check::<Complex64, Complex64>(&mut rng, &[5, 6, 7], &zz, &spec, spec.params());
    }
}

#[test]
fn tiled_kernel_agrees_with_the_reference() {
    let mut rng = Rng::new(56);
    let f5 = random_filter::<f32>(&mut rng, &[5, 5]);
    let f3 = random_filter::<f32>(&mut rng, &[3, 3, 3]);
    for border in [Border::Mirror, Border::Constant(0.75)] {
        let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, border);
        let params = spec.params().algorithm(ConvAlgorithm::Tiled);
        let got = check::<f32, f32>(&mut rng, &[70, 129], &f5, &spec, params.clone());
        assert!(matches!(got, ConvStrategy::Tiled { .. }), "{got:?}");
        check::<f32, f32>(&mut rng, &[2, 9, 40, 33], &f3, &spec, params.clone());
        let mut strided = Spec::new(ConvMode::Correlation, ConvOutput::Full, border);
        strided.stride = vec![2, 3];
        strided.dilation = vec![2, 1];
        check::<f32, f32>(&mut rng, &[45, 70], &f5, &strided, strided.params().algorithm(ConvAlgorithm::Tiled));
    }
}

/// `conv_blocked`: the filter compiled in, several outputs per work-item, planes streamed through a ring of
/// accumulators. Image sizes are not multiples of its 128 × 64 (f32) output blocks; the 3-D volume has 41 planes,
/// more than one run of output planes per group; even filters and origins move the window off-centre; every
/// border rule; the largest compiled filter (32 × 32) and the first one past it (falls back to `Tiled`).
#[test]
fn blocked_kernel_agrees_with_the_reference() {
    let mut rng = Rng::new(59);
    let blocked = |s: &ConvStrategy| matches!(s, ConvStrategy::Blocked { .. });
    let f3 = random_filter::<f32>(&mut rng, &[3, 3]);
    let f46 = random_filter::<f32>(&mut rng, &[4, 6]);
    let f333 = random_filter::<f32>(&mut rng, &[3, 3, 3]);
    for border in BORDERS {
        for output in [ConvOutput::Same, ConvOutput::Valid, ConvOutput::Full] {
            let spec = Spec::new(ConvMode::Convolution, output, border);
            let params = spec.params().algorithm(ConvAlgorithm::Blocked);
            let got = check::<f32, f32>(&mut rng, &[70, 129], &f3, &spec, params.clone());
            assert!(blocked(&got), "{got:?}");
        }
        let mut spec = Spec::new(ConvMode::Correlation, ConvOutput::Same, border);
        spec.origin = vec![1, -2];
        let got =
            check::<f32, f32>(&mut rng, &[3, 67, 131], &f46, &spec, spec.params().algorithm(ConvAlgorithm::Blocked));
        assert!(blocked(&got), "{got:?}");
        let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, border);
        let got = check::<f32, f32>(
            &mut rng,
            &[2, 41, 40, 33],
            &f333,
            &spec,
            spec.params().algorithm(ConvAlgorithm::Blocked),
        );
        assert!(blocked(&got), "{got:?}");
    }
    let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, Border::Mirror);
    let params = spec.params().algorithm(ConvAlgorithm::Blocked);
    // Rows of 36 start on 16-byte boundaries: whole runs are stored as vectors.
    assert!(blocked(&check::<f32, f32>(&mut rng, &[41, 20, 36], &f333, &spec, params.clone())));
    // Wide enough for tiles wholly inside, whose planes are fetched a plane ahead.
    assert!(blocked(&check::<f32, f32>(&mut rng, &[20, 40, 300], &f333, &spec, params.clone())));
    let c5 = random_filter::<f32>(&mut rng, &[5, 5]);
    assert!(blocked(&check::<Complex32, f32>(&mut rng, &[33, 65], &c5, &spec, params.clone())));
    let z3 = random_filter::<Complex64>(&mut rng, &[3, 2, 3]);
    assert!(blocked(&check::<Complex64, Complex64>(&mut rng, &[9, 7, 17], &z3, &spec, params.clone())));
    let d7 = random_filter::<f64>(&mut rng, &[7, 1]);
    assert!(blocked(&check::<f64, f64>(&mut rng, &[129, 7], &d7, &spec, params.clone())));
    let f32x32 = random_filter::<f32>(&mut rng, &[32, 32]);
    assert!(blocked(&check::<f32, f32>(&mut rng, &[47, 140], &f32x32, &spec, params.clone().separable(false))));
    let f33 = random_filter::<f32>(&mut rng, &[33, 5]);
    let got = check::<f32, f32>(&mut rng, &[40, 50], &f33, &spec, params.separable(false));
    assert!(matches!(got, ConvStrategy::Tiled { .. }), "33 rows are past the compiled-in limit: {got:?}");
}

#[test]
fn separable_detection_and_equivalence() {
    let mut rng = Rng::new(57);
    let gaussian = Filter::<f32>::gaussian(1.0, 2).unwrap(); // 9×9
    let (x, _) = random::<f32>(&mut rng, &[61, 47]);
    let run = |filter: &Filter<f32>, params: ConvParams| {
        let out = XData::zeros(app(), &Convolution::<f32>::output_shape(x.shape(), filter.shape(), &params).unwrap())
            .unwrap();
        let mut c = Convolution::new(&x, filter, &out, params);
        c.init().unwrap();
        c.launch().unwrap();
        (fetch(&out), c.strategy().unwrap())
    };
    for border in BORDERS {
        let params = ConvParams::default().border(border).stride(&[1, 2]);
        let (sep, how) = run(&gaussian, params.clone());
        assert!(matches!(how, ConvStrategy::Separable { passes: 2, .. }), "a Gaussian runs separably: {how:?}");
        let (direct, how) = run(&gaussian, params.clone().separable(false));
        assert!(!matches!(how, ConvStrategy::Separable { .. }), "{how:?}");
        let tol = tolerance::<f32>(&gaussian.values().iter().map(|v| v.to_c64()).collect::<Vec<_>>(), 1.0);
        assert_close(&sep, &direct, 2.0 * tol, &format!("separable vs direct, {border:?}"));
    }
    let (_, how) = run(&Filter::laplacian(), ConvParams::default());
    assert!(!matches!(how, ConvStrategy::Separable { .. }), "a Laplacian is not rank-1: {how:?}");
    // 3-D Gaussian: three passes, checked against the reference.
    let g3 = Filter::<f32>::gaussian(0.7, 3).unwrap();
    let spec = Spec::new(ConvMode::Convolution, ConvOutput::Full, Border::Constant(0.75));
    let how = check::<f32, f32>(&mut rng, &[6, 11, 10], &g3, &spec, spec.params().algorithm(ConvAlgorithm::Separable));
    assert!(matches!(how, ConvStrategy::Separable { passes: 3, .. }), "{how:?}");
}

/// `ConvAlgorithm::SeparableFused`: a rank-1 filter's factors applied one after the other in one `conv_blocked`
/// pass (each staged row filtered along x once, then combined down y and z). Random rank-1 filters (outer products
/// of random factors, so every tap differs), even and odd, every border, every output mode, origins, batches, a
/// 3-D volume, complex data with real and complex filters, doubles, rows stored as vectors, and the largest
/// compiled filter; geometries conv_blocked does not take (a stride, 33 taps) fall back to one pass per axis.
/// Tolerance: `tolerance` (module doc), which bounds the fused sums too: t ≥ the x taps + the y·z taps they feed.
#[test]
fn separable_factors_in_one_pass_agree_with_the_reference() {
    let mut rng = Rng::new(61);
    let fused = |s: &ConvStrategy| matches!(s, ConvStrategy::SeparableFused { .. });
    fn rank1<K: Element>(rng: &mut Rng, lengths: &[usize]) -> Filter<K> {
        // Factors kept away from zero, so that the outer product is rank-1 well beyond Filter::separate's test.
        let factors: Vec<Filter<K>> = lengths
            .iter()
            .map(|&n| {
                let v: Vec<K> = rng.vec::<K>(n).into_iter().map(|w| K::from_c64(w.to_c64() * 0.5 + 1.0)).collect();
                Filter::new(&[n], v).unwrap()
            })
            .collect();
        Filter::outer(&factors).unwrap()
    }
    let f5x3 = rank1::<f32>(&mut rng, &[5, 3]);
    let f4x6 = rank1::<f32>(&mut rng, &[4, 6]);
    let f3x4x5 = rank1::<f32>(&mut rng, &[3, 4, 5]);
    for border in BORDERS {
        for output in [ConvOutput::Same, ConvOutput::Valid, ConvOutput::Full] {
            let spec = Spec::new(ConvMode::Convolution, output, border);
            let params = spec.params().algorithm(ConvAlgorithm::SeparableFused);
            let got = check::<f32, f32>(&mut rng, &[70, 129], &f5x3, &spec, params);
            assert!(fused(&got), "{got:?}");
        }
        let mut spec = Spec::new(ConvMode::Correlation, ConvOutput::Same, border);
        spec.origin = vec![1, -2];
        let params = spec.params().algorithm(ConvAlgorithm::SeparableFused);
        assert!(fused(&check::<f32, f32>(&mut rng, &[3, 67, 131], &f4x6, &spec, params)));
        let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, border);
        let params = spec.params().algorithm(ConvAlgorithm::SeparableFused);
        assert!(fused(&check::<f32, f32>(&mut rng, &[2, 41, 40, 33], &f3x4x5, &spec, params)));
    }
    let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, Border::Mirror);
    let params = spec.params().algorithm(ConvAlgorithm::SeparableFused);
    // Rows of 36 start on 16-byte boundaries: whole runs are stored as vectors.
    assert!(fused(&check::<f32, f32>(&mut rng, &[41, 20, 36], &f5x3, &spec, params.clone())));
    let c5 = rank1::<f32>(&mut rng, &[5, 5]);
    assert!(fused(&check::<Complex32, f32>(&mut rng, &[33, 65], &c5, &spec, params.clone())));
    let z3 = rank1::<Complex64>(&mut rng, &[3, 2, 3]);
    assert!(fused(&check::<Complex64, Complex64>(&mut rng, &[9, 7, 17], &z3, &spec, params.clone())));
    let d7 = rank1::<f64>(&mut rng, &[7, 9]);
    assert!(fused(&check::<f64, f64>(&mut rng, &[129, 70], &d7, &spec, params.clone())));
    let f32x32 = rank1::<f32>(&mut rng, &[32, 32]);
    assert!(fused(&check::<f32, f32>(&mut rng, &[47, 140], &f32x32, &spec, params.clone())));
    // Past what conv_blocked compiles in, or strided: one pass per axis.
    let f33 = rank1::<f32>(&mut rng, &[33, 5]);
    let got = check::<f32, f32>(&mut rng, &[40, 50], &f33, &spec, params.clone());
    assert!(matches!(got, ConvStrategy::Separable { passes: 2, .. }), "33 rows: {got:?}");
    let mut strided = spec.clone();
    strided.stride = vec![2, 1];
    let params = strided.params().algorithm(ConvAlgorithm::SeparableFused);
    let got = check::<f32, f32>(&mut rng, &[40, 50], &f5x3, &strided, params);
    assert!(matches!(got, ConvStrategy::Separable { passes: 2, .. }), "a stride: {got:?}");
    // A filter that is not rank-1 is refused, as for ConvAlgorithm::Separable.
    let (x, _) = random::<f32>(&mut rng, &[9, 9]);
    let err =
        Convolution::apply(&x, &Filter::<f32>::laplacian(), spec.params().algorithm(ConvAlgorithm::SeparableFused))
            .unwrap_err()
            .to_string();
    assert!(err.contains("SeparableFused") && err.contains("rank-1") && err.contains("[3, 3]"), "{err}");
}

/// The planner, where passes would not run on the host's threads (GPUs; CPU devices asked for kernels only),
/// takes one pass of the factors for small rank-1 filters — the Gaussians of σ ≤ 2, boxes up to 15 — and keeps
/// one pass per axis past 80 multiply-adds per output (σ = 3) and where conv_blocked stops (σ = 4: 33 taps).
#[test]
fn the_planner_fuses_small_separable_filters_where_its_kernels_run() {
    let mut rng = Rng::new(62);
    let (x, _) = random::<f32>(&mut rng, &[2, 75, 90]);
    let plan = |filter: &Filter<f32>, params: ConvParams| {
        let mut c = Convolution::new(&x, filter, &poisoned::<f32>(x.shape()), params);
        c.init().unwrap();
        c.strategy().unwrap()
    };
    let kernels = ConvParams::default().kernels_only(true);
    for sigma in [0.7, 1.5, 2.0] {
        let g = Filter::<f32>::gaussian(sigma, 2).unwrap();
        let got = plan(&g, kernels.clone());
        assert!(matches!(got, ConvStrategy::SeparableFused { .. }), "σ {sigma}: {got:?}");
    }
    let got = plan(&Filter::<f32>::box_filter(15, 2).unwrap(), kernels.clone());
    assert!(matches!(got, ConvStrategy::SeparableFused { .. }), "box 15: {got:?}");
    // σ 3: 25 taps, 4 rows per work-item, 200 multiply-adds per output; σ 4: 33 taps, past conv_blocked.
    for sigma in [3.0, 4.0] {
        let got = plan(&Filter::<f32>::gaussian(sigma, 2).unwrap(), kernels.clone());
        assert!(matches!(got, ConvStrategy::Separable { passes: 2, .. }), "σ {sigma}: {got:?}");
    }
    if app().device().kind == DeviceKind::Cpu {
        let got = plan(&Filter::<f32>::gaussian(1.5, 2).unwrap(), ConvParams::default());
        assert!(matches!(got, ConvStrategy::Separable { host: 2, .. }), "the host's passes on CPUs: {got:?}");
    }
}

#[test]
fn separable_convolution_from_factors() {
    let mut rng = Rng::new(58);
    let (a, b) = (random_filter::<f32>(&mut rng, &[4]), random_filter::<f32>(&mut rng, &[3]));
    let outer = Filter::outer(&[a.clone(), b.clone()]).unwrap();
    for border in [Border::Constant(0.75), Border::Reflect] {
        let mut spec = Spec::new(ConvMode::Correlation, ConvOutput::Full, border);
        spec.dilation = vec![2, 1];
        let (x, host) = random::<f32>(&mut rng, &[3, 14, 17]);
        let y = SeparableConvolution::apply(&x, &[a.clone(), b.clone()], spec.params()).unwrap();
        let w: Vec<Complex64> = outer.values().iter().map(|v| v.to_c64()).collect();
        let xmax = host.iter().fold(0.75f64, |m, v| m.max(v.norm()));
        assert_close(&fetch(&y), &conv_ref(&host, outer.shape(), &w, &spec), tolerance::<f32>(&w, xmax), "factors");
    }
    // Without a dilation, where the passes would not run on the host's threads, the factors run in one pass (as
    // the planner runs rank-1 filters); ConvAlgorithm::Separable keeps the passes.
    let w: Vec<Complex64> = outer.values().iter().map(|v| v.to_c64()).collect();
    for (algorithm, one_pass) in [(ConvAlgorithm::Auto, true), (ConvAlgorithm::Separable, false)] {
        let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, Border::Wrap);
        let (x, host) = random::<Complex32>(&mut rng, &[2, 23, 19]);
        let out = poisoned::<Complex32>(&[2, 23, 19]);
        let params = spec.params().kernels_only(true).algorithm(algorithm);
        let mut sep = SeparableConvolution::new(&x, &[a.clone(), b.clone()], &out, params);
        sep.init().unwrap();
        sep.launch().unwrap();
        let how = sep.strategy().unwrap();
        assert_eq!(matches!(how, ConvStrategy::SeparableFused { .. }), one_pass, "{algorithm:?}: {how:?}");
        let xmax = host.iter().fold(0.0f64, |m, v| m.max(v.norm()));
        let want = conv_ref(&host, outer.shape(), &w, &spec);
        assert_close(&fetch(&out), &want, tolerance::<Complex32>(&w, xmax), &format!("{how:?}"));
    }
}

#[test]
fn normalisation_only_when_asked() {
    let mut rng = Rng::new(59);
    let w = Filter::new(&[3], vec![1.0f32, 2.0, 1.0]).unwrap();
    let (x, host) = random::<f32>(&mut rng, &[20]);
    let zero = ConvParams::default().border(Border::ZERO);
    let plain = Convolution::apply(&x, &w, zero.clone()).unwrap();
    let normed = Convolution::apply(&x, &w, zero.normalize(true)).unwrap();
    let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, Border::ZERO);
    let quarter: Vec<Complex64> = [0.25, 0.5, 0.25].iter().map(|&v| Complex64::new(v, 0.0)).collect();
    let tol = tolerance::<f32>(&quarter, 1.0) * 4.0;
    assert_close(&fetch(&normed), &conv_ref(&host, &[3], &quarter, &spec), tol, "normalised");
    assert_close(&fetch(&plain), &fetch(&normed).mapv(|v| v * 4.0), tol * 4.0, "unnormalised is 4x");
    let err = Convolution::apply(
        &x.reshape(&[4, 5]).unwrap(),
        &Filter::<f32>::laplacian(),
        ConvParams::default().normalize(true),
    );
    let err = err.err().unwrap().to_string();
    assert!(err.contains("sum to zero"), "{err}");
}

#[test]
fn bad_input_gives_typed_errors() {
    let x = XData::<f32>::zeros(app(), &[8, 8]).unwrap();
    let f3 = Filter::<f32>::new(&[2, 2, 2], vec![1.0; 8]).unwrap();
    let e = Convolution::apply(&x, &f3, ConvParams::default()).err().unwrap().to_string();
    assert!(e.contains("[2, 2, 2]") && e.contains("[8, 8]"), "{e}");
    let e = Filter::<f32>::new(&[3, 0], vec![]).unwrap_err().to_string();
    assert!(e.contains("[3, 0]"), "{e}");
    let f = Filter::<f32>::sobel_x();
    let e = Convolution::apply(&x, &f, ConvParams::default().stride(&[1, 0])).err().unwrap().to_string();
    assert!(e.contains("stride") && e.contains("axis 1"), "{e}");
    let e = Convolution::apply(&x, &f, ConvParams::default().dilation(&[0])).err().unwrap().to_string();
    assert!(e.contains("dilation"), "{e}");
    let e = Convolution::apply(&x, &f, ConvParams::default().origin(&[2])).err().unwrap().to_string();
    assert!(e.contains("origin 2") && e.contains("[-1, 1]"), "{e}");
    let e = Convolution::apply(&x, &f, ConvParams::default().stride(&[1, 2, 3])).err().unwrap().to_string();
    assert!(e.contains("3 values for a 2-axis filter"), "{e}");
    let wrong = XData::<f32>::zeros(app(), &[8, 9]).unwrap();
    let mut c = Convolution::new(&x, &f, &wrong, ConvParams::default());
    let e = c.init().unwrap_err().to_string();
    assert!(e.contains("[8, 8]") && e.contains("[8, 9]"), "{e}");
    let mut inplace = Convolution::new(&x, &f, &x, ConvParams::default());
    assert!(inplace.init().unwrap_err().to_string().contains("in place"));
    let e =
        Convolution::apply(&x, &Filter::<f32>::laplacian(), ConvParams::default().algorithm(ConvAlgorithm::Separable));
    assert!(e.err().unwrap().to_string().contains("rank-1"));
    let mut uninit = Convolution::new(&x, &f, &wrong, ConvParams::default());
    assert!(uninit.launch().is_err());
}

#[test]
fn laplacian_of_gaussian_matches_scipy_gaussian_laplace() {
    // tests/fixtures/make_log.py: scipy.ndimage.gaussian_laplace of an 11×11 delta, σ = 1.3 — its kernel.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/log_sigma1.3_2d.npy");
    let cliper::HostArray::F64(scipy) = cliper::read_npy(path).unwrap() else { panic!("f64 fixture") };
    let log = Filter::<f64>::named("log:1.3", 2).unwrap();
    assert_eq!(log.shape(), &[11, 11]);
    // Same formula, different summation order: agreement to a few ulps of the largest weight (0.11).
    for (got, want) in log.values().iter().zip(scipy.iter()) {
        assert!((got - want).abs() < 1e-15, "{got} vs scipy {want}");
    }
    // On the device, as a convolution of the delta (the kernel is symmetric): the same weights back.
    let mut delta = vec![0.0f64; 121];
    delta[60] = 1.0;
    let x = XData::from_slice(app(), &[11, 11], &delta).unwrap();
    let y = Convolution::apply(&x, &log, ConvParams::default().border(Border::Constant(0.0))).unwrap();
    for (got, want) in y.to_vec().unwrap().iter().zip(scipy.iter()) {
        assert!((got - want).abs() < 1e-15, "{got} vs scipy {want}");
    }
    for bad in ["log", "log:x", "box:2.5", "sobel-x:1", "median:3"] {
        let msg = Filter::<f32>::named(bad, 2).unwrap_err().to_string();
        assert!(msg.contains("gaussian:SIGMA"), "{bad}: {msg}");
    }
}

/// The FFT path (forced with ConvAlgorithm::Fft) against the same float64 reference as the direct kernels, for
/// every border, both modes, the three output sizes and an origin; real and complex data, real and complex
/// filters, 2-D and 3-D with batches. Its rounding is the FFT's, not a sum of products: the tolerance is
/// 8 u·log₂M·‖E‖₂·‖w‖₂ (M points per transform, E the border-extended image, bounded through xmax).
#[test]
fn fft_path_agrees_with_the_reference() {
    fn check_fft<T: Element, K: cliper::FilterElement<T>>(
        rng: &mut Rng,
        shape: &[usize],
        filter: &Filter<K>,
        spec: &Spec,
    ) {
        let (x, host) = random::<T>(rng, shape);
        // On CPU devices real images with real filters take the host's real transforms unless kernels are asked
        // for: both ways, everywhere.
        for kernels_only in [false, true] {
            let params = spec.params().algorithm(ConvAlgorithm::Fft).kernels_only(kernels_only);
            let out = poisoned::<T>(&Convolution::<T, K>::output_shape(shape, filter.shape(), &params).unwrap());
            let mut conv = Convolution::new(&x, filter, &out, params);
            conv.init().unwrap_or_else(|e| panic!("init {shape:?} {:?} {spec:?}: {e}", filter.shape()));
            conv.launch().unwrap();
            let Some(ConvStrategy::Fft { points }) = conv.strategy() else { panic!("{:?}", conv.strategy()) };
            let w: Vec<Complex64> = filter.values().iter().map(|v| v.to_c64()).collect();
            let xmax = host.iter().fold(border_magnitude(spec.border), |m, v| m.max(v.norm()));
            let w2 = w.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
            let tol = 8.0 * eps::<T>() * (points as f64).log2().max(1.0) * xmax * (points as f64).sqrt() * w2;
            let what = format!(
                "{} {shape:?} filter {:?} {spec:?} FFT on {points} points, kernels only: {kernels_only}",
                T::NAME,
                filter.shape()
            );
            assert_close(&fetch(&out), &conv_ref(&host, filter.shape(), &w, spec), tol, &what);
        }
    }
    let mut rng = Rng::new(91);
    let f = random_filter::<f32>(&mut rng, &[7, 9]);
    for border in BORDERS {
        for mode in [ConvMode::Convolution, ConvMode::Correlation] {
            for output in [ConvOutput::Same, ConvOutput::Valid, ConvOutput::Full] {
                check_fft::<f32, f32>(&mut rng, &[70, 129], &f, &Spec::new(mode, output, border));
            }
        }
        let mut shifted = Spec::new(ConvMode::Convolution, ConvOutput::Same, border);
        shifted.origin = vec![-3, 4];
        check_fft::<f32, f32>(&mut rng, &[31, 40], &f, &shifted);
    }
    let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, Border::Mirror);
    let fc = random_filter::<Complex32>(&mut rng, &[5, 4]);
    check_fft::<Complex32, Complex32>(&mut rng, &[3, 33, 20], &fc, &spec);
    check_fft::<Complex32, f32>(&mut rng, &[21, 17], &f, &spec);
    let f3 = random_filter::<f64>(&mut rng, &[3, 5, 3]);
    check_fft::<f64, f64>(
        &mut rng,
        &[2, 9, 40, 33],
        &f3,
        &Spec::new(ConvMode::Correlation, ConvOutput::Full, Border::Wrap),
    );
    let f1 = random_filter::<Complex64>(&mut rng, &[129]);
    check_fft::<Complex64, Complex64>(
        &mut rng,
        &[4, 257],
        &f1,
        &Spec::new(ConvMode::Convolution, ConvOutput::Valid, Border::Nearest),
    );
    // Strides and dilations stay with the direct kernels: asking for the FFT is an error that says why.
    let x = XData::<f32>::zeros(app(), &[20, 20]).unwrap();
    let params = ConvParams::default().stride(&[2]).algorithm(ConvAlgorithm::Fft);
    let out =
        XData::<f32>::zeros(app(), &Convolution::<f32>::output_shape(&[20, 20], &[7, 9], &params).unwrap()).unwrap();
    let e = Convolution::new(&x, &f, &out, params).init().unwrap_err().to_string();
    assert!(e.contains("stride"), "{e}");
    // The planner takes the FFT path by itself for a large, non-separable filter.
    let big = random_filter::<f32>(&mut rng, &[41, 41]);
    let img = XData::<f32>::zeros(app(), &[64, 80]).unwrap();
    let out = XData::<f32>::zeros(app(), &[64, 80]).unwrap();
    let mut conv = Convolution::new(&img, &big, &out, ConvParams::default());
    conv.init().unwrap();
    assert!(matches!(conv.strategy(), Some(ConvStrategy::Fft { .. })), "{:?}", conv.strategy());
}

#[test]
fn separable_passes_on_views_and_into_views() {
    // Strided and offset inputs (a transposed crop) and outputs that are not contiguous (every other column of
    // a wider array): the host passes read any layout, and a pass whose output is not contiguous runs its
    // kernel instead; each result against the reference, for real and complex data.
    let mut rng = Rng::new(60);
    let gaussian = Filter::<f32>::gaussian(1.2, 2).unwrap();
    for border in [Border::Reflect, Border::Constant(0.5), Border::Wrap] {
        let spec = Spec::new(ConvMode::Convolution, ConvOutput::Same, border);
        let w: Vec<Complex64> = gaussian.values().iter().map(|v| v.to_c64()).collect();
        let (big, host) = random::<f32>(&mut rng, &[3, 40, 29]);
        let view = big.crop(&[(0, 0), (3, 4), (2, 5)]).unwrap().t(); // [3, 22, 33], strided
        let host_view = host
            .slice_each_axis(|a| match a.axis.index() {
                1 => ndarray::Slice::from(3..36),
                2 => ndarray::Slice::from(2..24),
                _ => ndarray::Slice::from(..),
            })
            .permuted_axes(IxDyn(&[0, 2, 1]))
            .to_owned();
        let want = conv_ref(&host_view, gaussian.shape(), &w, &spec);
        let tol = tolerance::<f32>(&w, 1.0f64.max(border_magnitude(border)));
        let wide = poisoned::<f32>(&[3, 22, 66]);
        let every_other = wide.reshape(&[3, 22, 33, 2]).unwrap().index_axis(3, 1).unwrap();
        for (out, contiguous) in [(poisoned::<f32>(&[3, 22, 33]), true), (every_other, false)] {
            let mut conv = Convolution::new(&view, &gaussian, &out, spec.params());
            conv.init().unwrap();
            conv.launch().unwrap();
            let how = conv.strategy().unwrap();
            if app().device().kind == DeviceKind::Cpu {
                let host_passes = if contiguous { 2 } else { 1 };
                assert!(matches!(how, ConvStrategy::Separable { host, .. } if host == host_passes), "{how:?}");
            }
            assert_close(&fetch(&out), &want, tol, &format!("{border:?} into a contiguous output: {contiguous}"));
        }
        // Complex data with the real filter, through a view as well.
        let (cbig, chost) = random::<Complex32>(&mut rng, &[2, 17, 30]);
        let cview = cbig.slice_axis(2, 3..27).unwrap();
        let cwant = conv_ref(
            &chost
                .slice_each_axis(|a| {
                    if a.axis.index() == 2 { ndarray::Slice::from(3..27) } else { ndarray::Slice::from(..) }
                })
                .to_owned(),
            gaussian.shape(),
            &w,
            &spec,
        );
        let cout = Convolution::apply(&cview, &gaussian, spec.params()).unwrap();
        assert_close(
            &fetch(&cout),
            &cwant,
            tolerance::<Complex32>(&w, 1.5f64.max(border_magnitude(border))),
            "complex view",
        );
    }
}

/// Issue 44, item 14: each border is the scipy.ndimage mode of its name (`Border::Reflect` was numpy's reflect,
/// scipy's `mirror`). The values are scipy 1.17's `correlate1d([1..7], [1, 10, 100, 1000, 10000], mode, cval=-1)`:
/// each digit of a result is one tap's input, so a wrong border shows as a wrong digit. Exact in f64 (sums of
/// integers below 2^53).
#[test]
fn each_border_is_the_scipy_mode_of_its_name() {
    let app = app();
    let x = XData::from_slice(app, &[7], &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]).unwrap();
    let w = Filter::new(&[5], vec![1.0f64, 10.0, 100.0, 1000.0, 10000.0]).unwrap();
    for (name, border, scipy) in [
        ("reflect", Border::Reflect, [32112.0, 43211.0, 54321.0, 65432.0, 76543.0, 77654.0, 67765.0]),
        ("mirror", Border::Mirror, [32123.0, 43212.0, 54321.0, 65432.0, 76543.0, 67654.0, 56765.0]),
        ("nearest", Border::Nearest, [32111.0, 43211.0, 54321.0, 65432.0, 76543.0, 77654.0, 77765.0]),
        ("wrap", Border::Wrap, [32176.0, 43217.0, 54321.0, 65432.0, 76543.0, 17654.0, 21765.0]),
        ("constant", Border::Constant(-1.0), [32089.0, 43209.0, 54321.0, 65432.0, 76543.0, -2346.0, -10235.0]),
    ] {
        // The scipy name parses to the variant of that name (constant's value is the caller's cval).
        let parsed = Border::scipy(name).unwrap();
        assert!(parsed == border || matches!((parsed, border), (Border::Constant(_), Border::Constant(_))), "{name}");
        let params = ConvParams::default().mode(ConvMode::Correlation).border(border);
        let y = Convolution::apply(&x, &w, params).unwrap();
        assert_eq!(y.to_vec().unwrap(), scipy, "{name}");
    }
}

/// scipy.ndimage.laplace spreads NaN and ±inf as the sum over the axes of `[1, −2, 1]` along each: a tap whose
/// weight is 0 in the five-point stencil (the diagonals) takes no part, so an infinity does not turn its diagonal
/// neighbours into NaN (0 · inf). tests/fixtures/make_nonfinite.py: three 8 × 9 images of small integers with NaN,
/// ±inf and both at interior, edge and corner places; scipy's float32 and float64 results are equal, and ours
/// must equal them element for element (NaN where NaN, the same infinity; integers: exact in both types).
#[test]
fn laplacian_spreads_nan_and_infinities_as_scipy_laplace() {
    let read = |name: &str| match cliper::read_npy(format!(
        "{}/tests/fixtures/nonfinite/{name}.npy",
        env!("CARGO_MANIFEST_DIR")
    )) {
        Ok(cliper::HostArray::F64(a)) => a,
        other => panic!("{name}: {other:?}"),
    };
    let (inputs, want) = (read("inputs"), read("laplace"));
    for double in [false, true] {
        let mut wrong = vec![];
        for (k, image) in inputs.outer_iter().enumerate() {
            let got: Vec<f64> = if double {
                let x = XData::from_ndarray(app(), &image.to_owned().into_dyn()).unwrap();
                Convolution::apply(&x, &Filter::<f64>::laplacian(), ConvParams::default()).unwrap().to_vec().unwrap()
            } else {
                let x = XData::from_ndarray(app(), &image.mapv(|v| v as f32).into_dyn()).unwrap();
                let y = Convolution::apply(&x, &Filter::<f32>::laplacian(), ConvParams::default()).unwrap();
                y.to_vec().unwrap().iter().map(|&v| v as f64).collect()
            };
            for (i, (g, w)) in got.iter().zip(want.outer_iter().nth(k).unwrap().iter()).enumerate() {
                if !(g == w || (g.is_nan() && w.is_nan())) {
                    wrong.push(format!("image {k} [{}, {}]: {g} vs scipy {w}", i / 9, i % 9));
                }
            }
        }
        assert!(wrong.is_empty(), "double {double}: {} differ: {wrong:?}", wrong.len());
    }
}

/// The stages of one fused chain after a convolution into `y`: `a = clip(1.5·y − 0.2, −1, 1)` (for complex
/// data, its conjugate instead of the clip), then
/// `b = a + y·z` (z an array of y's layout), then `m = |b| > 0.3` into an array of the real type.
/// The stages, the arrays `a` and `b` and the mask `m` they write.
type Stages<T> = (Vec<Box<dyn Process>>, [XData<T>; 2], XData<<T as Element>::Real>);

fn stages_after<T: Element>(y: &XData<T>, z: &XData<T>) -> Stages<T>
where
    T::Real: Element,
{
    let shape = y.shape();
    let (a, b) = (poisoned::<T>(shape), poisoned::<T>(shape));
    let m = XData::<T::Real>::zeros(app(), shape).unwrap();
    let scaled = Expr::input(0) * 1.5 - 0.2;
    let stages: Vec<Box<dyn Process>> = vec![
        Box::new(Elementwise::new(&[y], &a, if T::IS_COMPLEX { scaled.conj() } else { scaled.clip(-1.0, 1.0) })),
        Box::new(Elementwise::new(&[&a, y, z], &b, Expr::input(0) + Expr::input(1) * Expr::input(2))),
        Box::new(Elementwise::<T, T::Real>::new(&[&b], &m, Expr::input(0).abs().greater(0.3))),
    ];
    (stages, [a, b], m)
}

/// Every output of a convolution followed by element-wise stages, run as one Pipeline (fused) and process by
/// process (not fused); and how the fused run computed the stages.
fn fused_and_unfused<T: Element>(
    shape: &[usize],
    filter: &Filter<T::Real>,
    params: ConvParams,
    separable: bool,
) -> (Vec<ArrayD<Complex64>>, Vec<ArrayD<Complex64>>, Option<EpilogueStrategy>)
where
    T::Real: Element + cliper::FilterElement<T>,
{
    let mut rng = Rng::new(shape.iter().sum::<usize>() as u64);
    let (x, _) = random::<T>(&mut rng, shape);
    let (z, _) = random::<T>(&mut rng, shape);
    let mut outputs = Vec::new();
    let mut how = None;
    for fused in [true, false] {
        let y = poisoned::<T>(shape);
        let (stages, [a, b], m) = stages_after(&y, &z);
        if fused {
            let mut p = Pipeline::new(app());
            how = if separable {
                let factors = filter.separate().expect("a rank-1 filter");
                let conv = p.push_shared(SeparableConvolution::new(&x, &factors, &y, params.clone()));
                stages.into_iter().for_each(|s| _ = p.push(s));
                p.init().unwrap();
                p.run().unwrap();
                conv.lock().unwrap().epilogue()
            } else {
                let conv = p.push_shared(Convolution::new(&x, filter, &y, params.clone()));
                stages.into_iter().for_each(|s| _ = p.push(s));
                p.init().unwrap();
                p.run().unwrap();
                conv.lock().unwrap().epilogue()
            };
        } else {
            if separable {
                let factors = filter.separate().expect("a rank-1 filter");
                SeparableConvolution::new(&x, &factors, &y, params.clone()).run().unwrap();
            } else {
                Convolution::new(&x, filter, &y, params.clone()).run().unwrap();
            }
            for mut s in stages {
                s.run().unwrap();
            }
        }
        outputs.push(vec![fetch(&y), fetch(&a), fetch(&b), fetch(&m)]);
    }
    let unfused = outputs.pop().unwrap();
    (outputs.pop().unwrap(), unfused, how)
}

#[test]
fn element_wise_stages_fused_into_the_convolution_give_the_unfused_results() {
    // The same expressions on the same stored values: exact on PoCL, whose compiler contracts multiply-adds only
    // within one C expression; a GPU compiler may contract one differently in the two programs (one rounding,
    // 2ε relative). The mask compares |b| with 0.3, which random data does not hit within that.
    fn agree<T: Element>(fused: &[ArrayD<Complex64>], unfused: &[ArrayD<Complex64>], what: &str) {
        let names = ["convolution", "clip stage", "a + y·z stage", "mask stage"];
        for ((f, u), name) in fused.iter().zip(unfused).zip(names) {
            assert_eq!(f.shape(), u.shape());
            for (i, (g, w)) in f.iter().zip(u.iter()).enumerate() {
                assert!(
                    (g - w).norm() <= 2.0 * eps::<T>() * (w.norm() + 1.0),
                    "{what}, {name}, element {i}: {g} vs {w}"
                );
            }
        }
    }
    let mut rng = Rng::new(77);
    let laplace = Filter::<f32>::new(&[3, 3], vec![0.0, 1.0, 0.0, 1.0, -4.0, 1.0, 0.0, 1.0, 0.0]).unwrap();
    let five: Filter<f32> = random_filter(&mut rng, &[5, 5]);
    let cube: Filter<f64> = random_filter(&mut rng, &[3, 3, 3]);
    let gauss = Filter::<f32>::gaussian(1.5, 2).unwrap();
    let in_kernel = |stages| Some(EpilogueStrategy::InKernel { stages });
    let separate = |stages| Some(EpilogueStrategy::Separate { stages });
    let p = ConvParams::default();
    // Every kernel of the last pass, shapes that are no multiple of any tile, a batch, every border.
    for (i, border) in BORDERS.into_iter().enumerate() {
        let algorithm = [ConvAlgorithm::Blocked, ConvAlgorithm::Tiled, ConvAlgorithm::Direct][i % 3];
        let params = p.clone().border(border).algorithm(algorithm);
        let (f, u, how) = fused_and_unfused::<f32>(&[2, 37, 45], &five, params, false);
        agree::<f32>(&f, &u, &format!("5×5 {algorithm:?} {border:?}"));
        assert_eq!(how, in_kernel(3), "{algorithm:?}");
    }
    // Where the planner chooses, CPU devices run the stages after the convolution.
    let cpu = app().device().kind == DeviceKind::Cpu;
    let planned = |stages| if cpu { separate(stages) } else { in_kernel(stages) };
    // Rows of a multiple of 4 elements: conv_blocked stores runs of 4 as vectors, and the stages with them.
    let blocked = p.clone().algorithm(ConvAlgorithm::Blocked);
    for width in [70, 72] {
        let (f, u, how) = fused_and_unfused::<f32>(&[61, width], &laplace, blocked.clone(), false);
        agree::<f32>(&f, &u, &format!("laplace, rows of {width}"));
        assert_eq!(how, in_kernel(3));
    }
    let (f, u, how) = fused_and_unfused::<f32>(&[61, 72], &laplace, p.clone(), false);
    agree::<f32>(&f, &u, "laplace as planned");
    assert_eq!(how, planned(3));
    let (f, u, how) = fused_and_unfused::<f64>(&[9, 19, 23], &cube, blocked.clone().border(Border::Reflect), false);
    agree::<f64>(&f, &u, "3×3×3 f64");
    assert_eq!(how, in_kernel(3));
    // Complex data through a real filter; the mask is real.
    let (f, u, how) = fused_and_unfused::<Complex32>(&[33, 50], &five, blocked.clone().border(Border::Wrap), false);
    agree::<Complex32>(&f, &u, "5×5 c32");
    assert_eq!(how, in_kernel(3));
    // Separable passes: in the last kernel pass, or after passes on the host's threads (a CPU device).
    let kernels = p.clone().kernels_only(true);
    let (f, u, how) = fused_and_unfused::<f32>(&[3, 40, 31], &gauss, kernels, true);
    agree::<f32>(&f, &u, "separable in kernels");
    assert_eq!(how, in_kernel(3));
    let (f, u, how) = fused_and_unfused::<f32>(&[3, 40, 31], &gauss, p.clone(), true);
    agree::<f32>(&f, &u, "separable");
    assert_eq!(how, planned(3));
    // The FFT path runs the stages after it.
    let (f, u, how) = fused_and_unfused::<f32>(&[40, 52], &five, p.clone().algorithm(ConvAlgorithm::Fft), false);
    agree::<f32>(&f, &u, "fft");
    assert_eq!(how, separate(3));
}

#[test]
fn stages_that_cannot_follow_a_convolution_in_its_stores_are_left_or_run_after_it() {
    let x = XData::from_slice(app(), &[6, 7], &(0..42).map(|v| v as f32).collect::<Vec<_>>()).unwrap();
    let filter = Filter::new(&[3, 3], vec![1.0f32 / 9.0; 9]).unwrap();
    let y = XData::<f32>::zeros(app(), &[6, 7]).unwrap();
    let want_y = Convolution::apply(&x, &filter, ConvParams::default()).unwrap().to_vec().unwrap();
    let twice: Vec<f32> = want_y.iter().map(|v| v * 2.0).collect();
    // A stage writing the convolution's input: the convolution reads neighbours of every element, so not taken.
    let x2 = XData::from_slice(app(), &[6, 7], &x.to_vec().unwrap()).unwrap();
    let y2 = XData::<f32>::zeros(app(), &[6, 7]).unwrap();
    let mut p = Pipeline::new(app());
    let conv = p.push_shared(Convolution::new(&x2, &filter, &y2, ConvParams::default()));
    p.push(Box::new(Elementwise::new(&[&y2], &x2, Expr::input(0) * 2.0)));
    p.run().unwrap();
    assert_eq!(conv.lock().unwrap().epilogue(), None);
    assert_eq!(x2.to_vec().unwrap(), twice);
    // In place on the convolution's output: not taken either (the last pass writes it through `restrict`).
    let mut p = Pipeline::new(app());
    let conv = p.push_shared(Convolution::new(&x, &filter, &y, ConvParams::default()));
    p.push(Box::new(Elementwise::new(&[&y], &y, Expr::input(0) * 2.0)));
    p.run().unwrap();
    assert_eq!(conv.lock().unwrap().epilogue(), None);
    assert_eq!(y.to_vec().unwrap(), twice);
    // A stage with a mistake (`maximum` of complex values) is not taken: its own init names it.
    let z = XData::from_slice(app(), &[6, 7], &vec![Complex32::new(1.0, 2.0); 42]).unwrap();
    let (zy, zm) =
        (XData::<Complex32>::zeros(app(), &[6, 7]).unwrap(), XData::<Complex32>::zeros(app(), &[6, 7]).unwrap());
    let mut p = Pipeline::new(app());
    let conv = p.push_shared(Convolution::new(&z, &filter, &zy, ConvParams::default()));
    p.push(Box::new(Elementwise::new(&[&zy], &zm, Expr::input(0).maximum(0.0))));
    let e = p.init().unwrap_err().to_string();
    assert!(e.starts_with("Elementwise") && e.contains("maximum"), "{e}");
    assert_eq!(conv.lock().unwrap().epilogue(), None);
    // The convolution's output a view at an offset, the stage's output a whole array of the same strides: in its
    // stores, each at its own offset.
    let rows = XData::<f32>::zeros(app(), &[8, 7]).unwrap();
    let y_view = rows.slice_axis(0, 2..).unwrap();
    let plain = XData::<f32>::zeros(app(), &[6, 7]).unwrap();
    let mut p = Pipeline::new(app());
    let conv =
        p.push_shared(Convolution::new(&x, &filter, &y_view, ConvParams::default().algorithm(ConvAlgorithm::Blocked)));
    p.push(Box::new(Elementwise::new(&[&y_view], &plain, Expr::input(0) * 2.0)));
    p.run().unwrap();
    assert_eq!(conv.lock().unwrap().epilogue(), Some(EpilogueStrategy::InKernel { stages: 1 }));
    let blocked = ConvParams::default().algorithm(ConvAlgorithm::Blocked);
    let want_view = Convolution::apply(&x, &filter, blocked).unwrap().to_vec().unwrap();
    let doubled: Vec<f32> = want_view.iter().map(|v| v * 2.0).collect();
    assert_eq!((y_view.to_vec().unwrap(), plain.to_vec().unwrap()), (want_view, doubled));
    assert_eq!(rows.to_vec().unwrap().get(..14), Some(&[0.0f32; 14][..]), "the rows before the view untouched");
    // More outputs than a kernel's arguments can take beside the convolution's (16): taken, run after it.
    let outs: Vec<XData<f32>> = (0..17).map(|_| XData::<f32>::zeros(app(), &[6, 7]).unwrap()).collect();
    let mut p = Pipeline::new(app());
    let conv = p.push_shared(Convolution::new(&x, &filter, &y, ConvParams::default()));
    let mut from = y.clone();
    for out in &outs {
        p.push(Box::new(Elementwise::new(&[&from], out, Expr::input(0) + 1.0)));
        from = out.clone();
    }
    p.run().unwrap();
    assert_eq!(conv.lock().unwrap().epilogue(), Some(EpilogueStrategy::Separate { stages: 17 }));
    let last: Vec<f32> = want_y.iter().map(|v| (0..17).fold(*v, |a, _| a + 1.0)).collect();
    assert_eq!(outs[16].to_vec().unwrap(), last);
    // A row broadcast along the image and an output that is a transposed view: taken, run after the passes.
    let bias = XData::from_slice(app(), &[7], &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]).unwrap();
    let wide = XData::<f32>::zeros(app(), &[7, 6]).unwrap();
    let every_other = wide.t();
    let mut p = Pipeline::new(app());
    let conv = p.push_shared(Convolution::new(&x, &filter, &y, ConvParams::default()));
    p.push(Box::new(Elementwise::new(&[&y, &bias], &every_other, Expr::input(0) + Expr::input(1))));
    p.run().unwrap();
    assert_eq!(conv.lock().unwrap().epilogue(), Some(EpilogueStrategy::Separate { stages: 1 }));
    let got = every_other.to_vec().unwrap();
    let want: Vec<f32> = want_y.iter().enumerate().map(|(i, v)| v + (i % 7 + 1) as f32).collect();
    assert_eq!(got, want);
}
