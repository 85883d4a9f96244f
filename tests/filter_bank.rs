//! FilterBank (both algorithms) against a float64 reference of cuDNN's convolution forward:
//!   y[n, k, p, q] = Σ_c Σ_r Σ_s f[k, c, r', s'] · x[n, c, p·sh + r·dh − ph, q·sw + s·dw − pw]
//! with (r', s') = (r, s) for a correlation and flipped for a convolution, outside pixels from the border rule.
//!
//! Tolerance per output: 2·(C·R·S + 4)·ε·Σ|f[k]|·max|x| — a sum of C·R·S products in some order (the im2col path
//! sums in GEMM's blocked order), ε the unit roundoff, 2 for complex magnitudes. Winograd F(2×2, 3×3) sums in the
//! transformed domain, whose magnitudes are up to 16 times the direct ones' (FilterBank's documentation derives
//! it): 2·16·(C + 12)·ε·Σ|f[k]|·max|x|, C + 12 roundings deep (C in the product, 12 in the three transforms).
//! F(4×4, 3×3): up to 29⅓² ≈ 860.4 times, C + 30 roundings deep. That bound is loose (it allows 0.04 of
//! Σ|f[k]|·max|x| at 40 channels in f32), so its cases also hold the worst error to 2⁻¹⁴·Σ|f[k]|·max|x|: about
//! 100 times the worst that numpy's float32 emulation of these transforms gave at 64 channels (5.9·10⁻⁷), and
//! far below a wrong coefficient or a missing tap.
//! Seed 004's full-size case is checked at 3000 sampled outputs (corners included) to keep the float64
//! reference fast.

mod common;
use cliper::prelude::*;
use common::*;
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};

struct Case {
    pad: [usize; 2],
    stride: [usize; 2],
    dilation: [usize; 2],
    mode: ConvMode,
    border: Border,
}

impl Case {
    fn params(&self) -> FilterBankParams {
        FilterBankParams::default()
            .padding(self.pad)
            .stride(self.stride)
            .dilation(self.dilation)
            .mode(self.mode)
            .border(self.border)
    }
}

fn reference(x: &ArrayD<Complex64>, f: &ArrayD<Complex64>, case: &Case, at: [usize; 4]) -> Complex64 {
    let [n, k, p, q] = at;
    let (c_n, h, w) = (x.shape()[1], x.shape()[2] as i64, x.shape()[3] as i64);
    let (r_n, s_n) = (f.shape()[2], f.shape()[3]);
    let fill = Complex64::new(if let Border::Constant(v) = case.border { v } else { 0.0 }, 0.0);
    let mut acc = Complex64::default();
    for c in 0..c_n {
        for r in 0..r_n {
            for s in 0..s_n {
                let (rr, ss) = if case.mode == ConvMode::Convolution { (r_n - 1 - r, s_n - 1 - s) } else { (r, s) };
                let ih = (p * case.stride[0] + r * case.dilation[0]) as i64 - case.pad[0] as i64;
                let iw = (q * case.stride[1] + s * case.dilation[1]) as i64 - case.pad[1] as i64;
                let v = match (border_source(case.border, ih, h), border_source(case.border, iw, w)) {
                    (Some(i), Some(j)) => x[[n, c, i as usize, j as usize]],
                    _ => fill,
                };
                acc += f[[k, c, rr, ss]] * v;
            }
        }
    }
    acc
}

fn check<T: Element>(
    rng: &mut Rng,
    x_shape: [usize; 4],
    f_shape: [usize; 4],
    case: &Case,
    algorithm: FilterBankAlgorithm,
) -> FilterBankStrategy {
    check_at::<T>(rng, x_shape, f_shape, case, algorithm, GemmPrecision::Full, 0.0).0
}

/// [`check`] at a GEMM precision whose products may err by `extra` (relative, per product term) beyond FP32's
/// bound; also returns the output.
fn check_at<T: Element>(
    rng: &mut Rng,
    x_shape: [usize; 4],
    f_shape: [usize; 4],
    case: &Case,
    algorithm: FilterBankAlgorithm,
    precision: GemmPrecision,
    extra: f64,
) -> (FilterBankStrategy, ArrayD<Complex64>) {
    let (x, xh) = random::<T>(rng, &x_shape);
    let (f, fh) = random::<T>(rng, &f_shape);
    let params = case.params().algorithm(algorithm).precision(precision);
    let y_shape = FilterBank::<T>::output_shape(&x_shape, &f_shape, &params).unwrap();
    let y = poisoned::<T>(&y_shape);
    let mut bank = FilterBank::new(&x, &f, &y, params);
    bank.init().unwrap();
    bank.launch().unwrap();
    let got = fetch(&y);
    let xmax = xh.iter().fold(border_magnitude(case.border), |m, v| m.max(v.norm()));
    let taps = (f_shape[1] * f_shape[2] * f_shape[3]) as f64;
    let total = y_shape.iter().product::<usize>();
    let positions: Vec<usize> = if total <= 20_000 {
        (0..total).collect()
    } else {
        (0..3000).map(|i| if i < 2 { i * (total - 1) } else { rng.below(total) }).collect()
    };
    for i in positions {
        let at = [
            i / (y_shape[1] * y_shape[2] * y_shape[3]),
            i / (y_shape[2] * y_shape[3]) % y_shape[1],
            i / y_shape[3] % y_shape[2],
            i % y_shape[3],
        ];
        let fsum: f64 = (0..f_shape[1] * f_shape[2] * f_shape[3])
            .map(|j| fh.as_slice().unwrap()[at[1] * f_shape[1] * f_shape[2] * f_shape[3] + j].norm())
            .sum();
        // Winograd's products err on transformed values up to 16 (F(2×2)) or 860.4 (F(4×4)) times the direct ones
        // in magnitude.
        let (depth, magnitude) = match bank.strategy() {
            Some(FilterBankStrategy::Winograd { side: 2, .. }) => (f_shape[1] as f64 + 12.0, 16.0),
            Some(FilterBankStrategy::Winograd { .. }) => (f_shape[1] as f64 + 30.0, (88.0f64 / 3.0).powi(2)),
            _ => (taps + 4.0, 1.0),
        };
        let bound = 2.0 * magnitude * (depth * eps::<T>() + extra) * fsum * xmax;
        let tol = match bank.strategy() {
            Some(FilterBankStrategy::Winograd { side: 4, .. }) if extra == 0.0 => bound.min(fsum * xmax / 16384.0),
            _ => bound,
        };
        let want = reference(&xh, &fh, case, at);
        let g = got[[at[0], at[1], at[2], at[3]]];
        assert!(
            (g - want).norm() <= tol,
            "{} x {x_shape:?} f {f_shape:?} {algorithm:?} {:?}: y{at:?} = {g}, expected {want} (tol {tol:e})",
            T::NAME,
            bank.strategy()
        );
    }
    (bank.strategy().unwrap(), got)
}

const ALL: [FilterBankAlgorithm; 6] = [
    FilterBankAlgorithm::Direct,
    FilterBankAlgorithm::Blocked,
    FilterBankAlgorithm::Im2col,
    FilterBankAlgorithm::ImplicitGemm,
    FilterBankAlgorithm::Winograd,
    FilterBankAlgorithm::Winograd4x4,
];

#[test]
fn padding_stride_dilation_every_algorithm() {
    let mut rng = Rng::new(61);
    let cases = [
        Case { pad: [0, 0], stride: [1, 1], dilation: [1, 1], mode: ConvMode::Correlation, border: Border::ZERO },
        Case { pad: [1, 2], stride: [2, 1], dilation: [1, 1], mode: ConvMode::Convolution, border: Border::ZERO },
        Case { pad: [3, 3], stride: [1, 3], dilation: [2, 2], mode: ConvMode::Correlation, border: Border::Mirror },
        Case {
            pad: [2, 1],
            stride: [2, 2],
            dilation: [1, 3],
            mode: ConvMode::Convolution,
            border: Border::Constant(0.5),
        },
    ];
    for case in &cases {
        for algorithm in ALL {
            let how = check::<f32>(&mut rng, [3, 5, 17, 23], [7, 5, 3, 4], case, algorithm);
            // The implicit GEMM reads constant borders only, Winograd 3 × 3 filters only, the blocked kernel unit
            // strides and dilations only; the others fall back to the direct kernel.
            let constant = matches!(case.border, Border::Constant(_));
            let unit = case.stride == [1, 1] && case.dilation == [1, 1];
            let expected = match algorithm {
                FilterBankAlgorithm::Im2col => matches!(how, FilterBankStrategy::Im2col { images: 3 }),
                FilterBankAlgorithm::Blocked if unit => matches!(how, FilterBankStrategy::Blocked { filters: 7, .. }),
                FilterBankAlgorithm::ImplicitGemm if constant => matches!(how, FilterBankStrategy::ImplicitGemm { .. }),
                _ => how == FilterBankStrategy::Direct,
            };
            assert!(expected, "{algorithm:?} with {:?}: {how}", case.border);
        }
    }
}

/// Winograd F(2×2, 3×3) and F(4×4, 3×3) on every border rule, padding (none, symmetric, uneven), mode and type,
/// with output sizes that are not multiples of the tiles (the last row and column of tiles partly outside), against
/// float64 with their own bounds.
#[test]
fn winograd_three_by_three() {
    for (side, algorithm) in [(2, FilterBankAlgorithm::Winograd), (4, FilterBankAlgorithm::Winograd4x4)] {
        winograd_cases(side, algorithm);
    }
}

fn winograd_cases(side: usize, winograd: FilterBankAlgorithm) {
    let mut rng = Rng::new(67);
    let cases = [
        ([0, 0], ConvMode::Correlation, Border::ZERO),
        ([1, 1], ConvMode::Convolution, Border::ZERO),
        ([1, 2], ConvMode::Correlation, Border::Mirror),
        ([2, 0], ConvMode::Convolution, Border::Nearest),
        ([3, 3], ConvMode::Correlation, Border::Constant(0.5)),
        ([1, 1], ConvMode::Correlation, Border::Wrap),
    ];
    for (pad, mode, border) in cases {
        let case = Case { pad, stride: [1, 1], dilation: [1, 1], mode, border };
        let is_winograd = |how: FilterBankStrategy| matches!(how, FilterBankStrategy::Winograd { images: 3, side: s, .. } if s == side);
        let how = check::<f32>(&mut rng, [3, 5, 17, 23], [7, 5, 3, 3], &case, winograd);
        assert!(is_winograd(how), "{how}");
        assert!(is_winograd(check::<f64>(&mut rng, [3, 2, 12, 9], [4, 2, 3, 3], &case, winograd)));
        assert!(is_winograd(check::<Complex32>(&mut rng, [3, 3, 8, 13], [5, 3, 3, 3], &case, winograd)));
    }
    // Many channels: the bound's C term; 40 channels into 33 filters, output 31 × 26.
    let case =
        Case { pad: [1, 0], stride: [1, 1], dilation: [1, 1], mode: ConvMode::Correlation, border: Border::ZERO };
    check::<f32>(&mut rng, [2, 40, 31, 28], [33, 40, 3, 3], &case, winograd);
    // Stride, dilation or other filter sizes: the direct kernel.
    for (stride, dilation, r) in [([2, 1], [1, 1], 3), ([1, 1], [1, 2], 3), ([1, 1], [1, 1], 5)] {
        let case = Case { pad: [1, 1], stride, dilation, mode: ConvMode::Correlation, border: Border::ZERO };
        let how = check::<f32>(&mut rng, [2, 3, 15, 14], [4, 3, r, 3], &case, winograd);
        assert_eq!(how, FilterBankStrategy::Direct);
    }
}

/// The blocked kernel on every border rule, padding and mode, for each type, with filters in one block and in
/// several (20 filters: two blocks of 10; 35: three of 12, the last one short), outputs that are not multiples of
/// its 64 × 8 tiles, and filters from 1 × 1 to 32 × 32 taps (its largest); through strided views too. Against
/// float64 with the direct sum's bound.
#[test]
fn blocked_every_border_mode_and_block() {
    let mut rng = Rng::new(69);
    let blocked = FilterBankAlgorithm::Blocked;
    let cases = [
        ([0, 0], ConvMode::Correlation, Border::ZERO),
        ([2, 1], ConvMode::Convolution, Border::Mirror),
        ([1, 3], ConvMode::Correlation, Border::Nearest),
        ([3, 2], ConvMode::Convolution, Border::Constant(0.5)),
        ([1, 1], ConvMode::Correlation, Border::Wrap),
        ([2, 2], ConvMode::Correlation, Border::Reflect),
    ];
    let is_blocked = |how: FilterBankStrategy, k: usize| matches!(how, FilterBankStrategy::Blocked { filters, cols: 4 } if filters == k);
    for (pad, mode, border) in cases {
        let case = Case { pad, stride: [1, 1], dilation: [1, 1], mode, border };
        assert!(is_blocked(check::<f32>(&mut rng, [2, 3, 19, 70], [20, 3, 5, 4], &case, blocked), 10));
        assert!(is_blocked(check::<f64>(&mut rng, [1, 2, 9, 13], [35, 2, 3, 3], &case, blocked), 12));
        assert!(is_blocked(check::<Complex32>(&mut rng, [2, 3, 8, 11], [3, 3, 2, 3], &case, blocked), 3));
    }
    let zero =
        Case { pad: [0, 0], stride: [1, 1], dilation: [1, 1], mode: ConvMode::Correlation, border: Border::ZERO };
    assert!(is_blocked(check::<f32>(&mut rng, [1, 2, 40, 37], [4, 2, 32, 32], &zero, blocked), 4));
    assert!(is_blocked(check::<f32>(&mut rng, [3, 6, 5, 67], [17, 6, 1, 1], &zero, blocked), 9));
    // More than 32 taps along an axis, a stride or a dilation: the direct kernel.
    assert_eq!(check::<f32>(&mut rng, [1, 1, 40, 40], [2, 1, 33, 3], &zero, blocked), FilterBankStrategy::Direct);
    let strided = Case { stride: [2, 1], ..zero };
    assert_eq!(check::<f32>(&mut rng, [1, 2, 12, 12], [2, 2, 3, 3], &strided, blocked), FilterBankStrategy::Direct);
    // Strided views: a column window of the input, transposed filters, an output window of a wider array.
    let (wide, _) = random::<f32>(&mut rng, &[3, 4, 14, 90]);
    let x = wide.slice_axis(3, 7..80).unwrap();
    let (ft, _) = random::<f32>(&mut rng, &[18, 4, 5, 3]);
    let f = ft.permuted_axes(&[0, 1, 3, 2]).unwrap();
    let base = FilterBankParams::default().padding([2, 1]).border(Border::Mirror);
    let direct = FilterBank::apply(&x, &f, base.clone().algorithm(FilterBankAlgorithm::Direct)).unwrap();
    let wide_out = cliper::XData::<f32>::zeros(app(), &[3, 18, 16, 80]).unwrap();
    let y = wide_out.slice_axis(3, 2..73).unwrap();
    let mut bank = FilterBank::new(&x, &f, &y, base.algorithm(blocked));
    bank.init().unwrap();
    bank.launch().unwrap();
    assert!(is_blocked(bank.strategy().unwrap(), 9), "{:?}", bank.strategy());
    // Two summation orders of 60 products of magnitude ≤ 1: within 2·64·2⁻²⁴·60.
    for (u, v) in fetch(&direct).iter().zip(fetch(&y).iter()) {
        assert!((u - v).norm() <= 5e-4, "{u} vs {v}");
    }
    let outside = fetch(&wide_out.slice_axis(3, 73..80).unwrap());
    assert!(outside.iter().all(|v| v.norm() == 0.0));
}

/// Winograd's transformed arrays in chunks of images within a small memory budget, and through strided views
/// (a column window of the input, a transposed filter bank, an output window of a wider array), for both tile sizes.
#[test]
fn winograd_chunks_and_strided_views() {
    let mut rng = Rng::new(68);
    let (wide, _) = random::<f32>(&mut rng, &[5, 3, 12, 30]);
    let x = wide.slice_axis(3, 5..24).unwrap();
    let (ft, _) = random::<f32>(&mut rng, &[6, 3, 3, 3]);
    let f = ft.permuted_axes(&[0, 1, 3, 2]).unwrap();
    let base = FilterBankParams::default().padding([1, 1]).border(Border::Mirror);
    let direct = FilterBank::apply(&x, &f, base.clone().algorithm(FilterBankAlgorithm::Direct)).unwrap();
    // One image transforms into 16·(3 + 6)·6·10 floats = 34 560 bytes with 2 × 2 tiles, 80 000 bytes fit two;
    // into 36·(3 + 6)·3·5 floats = 19 440 bytes with 4 × 4 tiles, 40 000 bytes fit two. The two algorithms' errors
    // on 27 products of magnitude ≤ 1: within 2·16·(3 + 12)·2⁻²⁴·27 ≈ 8e-4 for F(2×2), and the F(4×4) cases'
    // 2⁻¹⁴·27 ≈ 1.6e-3 more (the test module's doc).
    for (side, algorithm, budget, tol) in [
        (2, FilterBankAlgorithm::Winograd, 80_000, 8e-4),
        (4, FilterBankAlgorithm::Winograd4x4, 40_000, 8e-4 + 27.0 / 16384.0),
    ] {
        let wide_out = cliper::XData::<f32>::zeros(app(), &[5, 6, 12, 25]).unwrap();
        let y = wide_out.slice_axis(3, 3..22).unwrap();
        let params = base.clone().algorithm(algorithm).memory_budget(budget);
        let mut bank = FilterBank::new(&x, &f, &y, params);
        bank.init().unwrap();
        bank.launch().unwrap();
        let how = bank.strategy();
        assert!(matches!(how, Some(FilterBankStrategy::Winograd { images: 2, side: s, .. }) if s == side), "{how:?}");
        for (u, v) in fetch(&direct).iter().zip(fetch(&y).iter()) {
            assert!((u - v).norm() <= tol, "{how:?}: {u} vs {v}");
        }
        // The window's neighbours stay as they were.
        let outside = fetch(&wide_out.slice_axis(3, 22..25).unwrap());
        assert!(outside.iter().all(|v| v.norm() == 0.0));
    }
}

#[test]
fn complex_and_double() {
    let mut rng = Rng::new(62);
    for border in [Border::Nearest, Border::Constant(-0.25)] {
        let case = Case { pad: [1, 1], stride: [1, 1], dilation: [1, 1], mode: ConvMode::Correlation, border };
        for algorithm in ALL {
            check::<Complex32>(&mut rng, [2, 3, 9, 11], [5, 3, 3, 3], &case, algorithm);
            check::<f64>(&mut rng, [1, 2, 12, 7], [9, 2, 2, 5], &case, algorithm);
        }
    }
}

#[test]
fn seed_004_shapes() {
    let mut rng = Rng::new(63);
    let case =
        Case { pad: [0, 0], stride: [1, 1], dilation: [1, 1], mode: ConvMode::Correlation, border: Border::ZERO };
    for algorithm in ALL {
        check::<f32>(&mut rng, [10, 4, 128, 128], [10, 4, 16, 16], &case, algorithm);
    }
}

#[test]
fn im2col_in_chunks_when_memory_is_short() {
    let mut rng = Rng::new(64);
    let (x, _) = random::<f32>(&mut rng, &[5, 2, 10, 10]);
    let (f, _) = random::<f32>(&mut rng, &[16, 2, 3, 3]);
    let full = FilterBank::apply(&x, &f, FilterBankParams::default().algorithm(FilterBankAlgorithm::Direct)).unwrap();
    // One image's unrolled matrix is 2·3·3 × 8·8 floats = 4608 bytes; a 10 000-byte budget fits two.
    let params = FilterBankParams::default().algorithm(FilterBankAlgorithm::Im2col).memory_budget(10_000);
    let y = cliper::XData::<f32>::zeros(app(), full.shape()).unwrap();
    let mut bank = FilterBank::new(&x, &f, &y, params);
    bank.init().unwrap();
    bank.launch().unwrap();
    assert_eq!(bank.strategy(), Some(FilterBankStrategy::Im2col { images: 2 }));
    let (a, b) = (fetch(&full), fetch(&y));
    for (u, v) in a.iter().zip(b.iter()) {
        assert!((u - v).norm() <= 1e-4, "{u} vs {v}");
    }
}

#[test]
fn bad_shapes_are_named() {
    let x = cliper::XData::<f32>::zeros(app(), &[2, 3, 8, 8]).unwrap();
    let f = cliper::XData::<f32>::zeros(app(), &[4, 2, 3, 3]).unwrap();
    let e = FilterBank::apply(&x, &f, FilterBankParams::default()).err().unwrap().to_string();
    assert!(e.contains("3 channels") && e.contains("have 2"), "{e}");
    let f3 = cliper::XData::<f32>::zeros(app(), &[4, 3, 3]).unwrap();
    let e = FilterBank::apply(&x, &f3, FilterBankParams::default()).err().unwrap().to_string();
    assert!(e.contains("[4, 3, 3]"), "{e}");
    let f = cliper::XData::<f32>::zeros(app(), &[4, 3, 3, 3]).unwrap();
    let e = FilterBank::apply(&x, &f, FilterBankParams::default().stride([0, 1])).err().unwrap().to_string();
    assert!(e.contains("stride"), "{e}");
}

/// The GEMM algorithms (im2col, implicit, Winograd) at [`GemmPrecision::Tf32`]: where the device has TF32 tensor
/// cores the product runs there (the result differs from FP32's; the implicit GEMM reports gemm_tmma) within FP32's
/// bound plus 2⁻¹⁰ + 2⁻²² per term (both operands rounded to TF32; for Winograd, terms of the transformed values,
/// up to 16 times larger); elsewhere the FP32 product runs, with FP32's bound. Winograd's products take the tensor
/// cores only with 256 channels and filters or more (shorter ones ran faster in FP32 on the H200).
/// 130 and 70 filters over 32 channels, 3 × 3, padding 1: large enough for the tiled GEMM, and for the implicit
/// GEMM's tensor-core kernel in its 128-row and 64-row blocks (from 64 filters).
#[test]
fn tf32_precision_reaches_the_gemm() {
    let case =
        Case { pad: [1, 1], stride: [1, 1], dilation: [1, 1], mode: ConvMode::Correlation, border: Border::ZERO };
    let tensor = GemmStrategy::tensor_cores::<f32>(app().device(), GemmPrecision::Tf32).is_ok();
    let cases = [
        (FilterBankAlgorithm::Im2col, ([3, 32, 30, 41], [130, 32, 3, 3]), tensor),
        (FilterBankAlgorithm::ImplicitGemm, ([3, 32, 30, 41], [130, 32, 3, 3]), tensor),
        (FilterBankAlgorithm::ImplicitGemm, ([2, 32, 33, 27], [70, 32, 3, 3]), tensor),
        (FilterBankAlgorithm::Winograd, ([3, 32, 30, 41], [130, 32, 3, 3]), false),
        (FilterBankAlgorithm::Winograd, ([1, 256, 9, 13], [256, 256, 3, 3]), tensor),
    ];
    for (algorithm, shapes, on_tensor_cores) in cases {
        let extra = if on_tensor_cores { 2f64.powi(-10) + 2f64.powi(-22) } else { 0.0 };
        let (strategy, tf32) =
            check_at::<f32>(&mut Rng::new(65), shapes.0, shapes.1, &case, algorithm, GemmPrecision::Tf32, extra);
        match strategy {
            FilterBankStrategy::Im2col { .. } => assert_eq!(algorithm, FilterBankAlgorithm::Im2col),
            FilterBankStrategy::ImplicitGemm { gemm } => {
                assert_eq!(algorithm, FilterBankAlgorithm::ImplicitGemm);
                assert_eq!(gemm == GemmStrategy::TensorCore, on_tensor_cores, "{gemm}");
            }
            // Winograd's products are MatMul's batches: the planner's tensor-core kernel, wgmma on Hopper.
            FilterBankStrategy::Winograd { gemm, .. } => {
                assert_eq!(algorithm, FilterBankAlgorithm::Winograd);
                let tensor_kernel = matches!(gemm, GemmStrategy::TensorCore | GemmStrategy::Wgmma);
                assert_eq!(tensor_kernel, on_tensor_cores, "{shapes:?}: {gemm}");
            }
            other => panic!("{algorithm:?} ran {other}"),
        }
        let (_, full) =
            check_at::<f32>(&mut Rng::new(65), shapes.0, shapes.1, &case, algorithm, GemmPrecision::Full, 0.0);
        let differs = tf32.iter().zip(full.iter()).any(|(a, b)| a != b);
        assert_eq!(
            differs, on_tensor_cores,
            "{algorithm:?} {shapes:?}: TF32 and FP32 results differ only on TF32 tensor cores"
        );
    }
}

/// The implicit GEMM reads the input through its strides and offset (a column window of a wider array here) and
/// matches the direct kernel, which is checked against float64 above.
#[test]
fn implicit_gemm_reads_strided_inputs() {
    let mut rng = Rng::new(66);
    let (wide, _) = random::<f32>(&mut rng, &[3, 5, 17, 30]);
    let x = wide.slice_axis(3, 4..27).unwrap();
    let (f, _) = random::<f32>(&mut rng, &[20, 5, 3, 3]);
    let base = FilterBankParams::default().padding([1, 1]).border(Border::Constant(0.5));
    let direct = FilterBank::apply(&x, &f, base.clone().algorithm(FilterBankAlgorithm::Direct)).unwrap();
    let y = cliper::XData::<f32>::zeros(app(), direct.shape()).unwrap();
    let mut bank = FilterBank::new(&x, &f, &y, base.algorithm(FilterBankAlgorithm::ImplicitGemm));
    bank.init().unwrap();
    bank.launch().unwrap();
    assert!(matches!(bank.strategy(), Some(FilterBankStrategy::ImplicitGemm { .. })), "{:?}", bank.strategy());
    // Two summation orders of 45 products of magnitude ≤ 1: within 64·2⁻²⁴·45.
    for (u, v) in fetch(&direct).iter().zip(fetch(&y).iter()) {
        assert!((u - v).norm() <= 2e-4, "{u} vs {v}");
    }
}
