//! Derivative filters against scipy.ndimage (tests/fixtures/make_derivatives.py, scipy 1.17, float64):
//! gaussian_filter with derivative orders, uniform_filter, sobel, prewitt, Scharr's weights, and the gradient
//! magnitudes (gaussian_gradient_magnitude, generic_gradient_magnitude with sobel/prewitt) in 2-D and 3-D.

use crate::common::app;
use cliper::Process;
use cliper::{
    Border, ConvMode, ConvParams, Convolution, Derivative, Filter, GradientMagnitude, GradientParams, HostArray, XData,
    read_npy,
};
use ndarray::ArrayD;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/derivatives/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

/// `got` within `rel` of `want`'s largest magnitude, everywhere.
fn assert_close(got: &[f64], want: &ArrayD<f64>, rel: f64, what: &str) {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        assert!((g - w).abs() <= rel * scale, "{what} [{i}]: {g} vs scipy {w}");
    }
}

// Tolerances: float64 sums of at most a few hundred products of weights ≤ 1 and data ≤ 1 differ from scipy's
// (summed in another order) by a few hundred ulps of the largest term at most: 1e-12 of the result's scale. The
// f32 runs: the same sums in float32, 2e-5 (≈ 170 ulps of f32) of the scale.
#[test]
fn derivative_filters_match_scipy() {
    let x2 = fixture("x2");
    let cases = [
        ("gauss_o01_reflect", "gaussian:1.3,2.1:0,1", "reflect"),
        ("gauss_o3_mirror", "gaussian:0.9,1.1:0,3", "mirror"),
        ("scharr1_reflect", "scharr-x", "reflect"),
    ];
    // Also in the fixtures, checked from the binary by cli/tests/ndimage/derivatives.rs (and the plain filters by
    // cli/tests/trust.rs): gauss_o20_nearest, uniform4_reflect, prewitt1_nearest. Each filter size and border
    // is a program of its own (PoCL: 2–4 s cold), so this file keeps one case per new feature.
    let x64 = XData::from_ndarray(app(), &x2).unwrap();
    let x32 = XData::from_ndarray(app(), &x2.mapv(|v| v as f32)).unwrap();
    for (name, spec, mode) in cases {
        let want = fixture(name);
        let params = ConvParams::default().border(Border::scipy(mode).unwrap()).mode(ConvMode::Correlation);
        let f64filter = Filter::<f64>::named(spec, 2).unwrap();
        let got = Convolution::apply(&x64, &f64filter, params.clone()).unwrap().to_vec().unwrap();
        assert_close(&got, &want, 1e-12, &format!("{spec} {mode} f64"));
        // float32 on a few filters only: each filter size and type is a new program (PoCL: 1–3 s each).
        if name == "gauss_o01_reflect" {
            let f32filter = Filter::<f32>::named(spec, 2).unwrap();
            let got: Vec<f64> = Convolution::apply(&x32, &f32filter, params)
                .unwrap()
                .to_vec()
                .unwrap()
                .iter()
                .map(|&v| v as f64)
                .collect();
            assert_close(&got, &want, 2e-5, &format!("{spec} {mode} f32"));
        }
    }
}

#[test]
fn gradient_magnitudes_match_scipy() {
    let (x2, x3) = (fixture("x2"), fixture("x3"));
    let cases = [
        ("ggm_1.5_reflect_2d", Derivative::Gaussian(vec![1.5]), "reflect", &x2),
        ("ggm_1.2_nearest_3d", Derivative::Gaussian(vec![1.2]), "nearest", &x3),
        ("sobel_mag_reflect_2d", Derivative::Sobel, "reflect", &x2),
        ("scharr_mag_wrap_2d", Derivative::Scharr, "wrap", &x2),
    ];
    for (name, derivative, mode, x) in cases {
        let want = fixture(name);
        // The fused kernel (GPUs' choice for the 3-tap stencils, and for Gaussians in 2-D) and the convolutions
        // (CPU devices'), both ways on every device; 3-D Gaussians have only the convolutions.
        let fusable = !name.ends_with("3d") || !matches!(derivative, Derivative::Gaussian(_));
        let base = GradientParams::default().derivative(derivative).border(Border::scipy(mode).unwrap());
        for params in [base.clone().fused(false), base.clone().fused(fusable), base] {
            let what = format!("{name} fused {:?}", params.fused);
            let got = GradientMagnitude::apply(&XData::from_ndarray(app(), x).unwrap(), params.clone()).unwrap();
            assert_close(&got.to_vec().unwrap(), &want, 1e-12, &format!("{what} f64"));
            let got =
                GradientMagnitude::apply(&XData::from_ndarray(app(), &x.mapv(|v| v as f32)).unwrap(), params).unwrap();
            let got: Vec<f64> = got.to_vec().unwrap().iter().map(|&v| v as f64).collect();
            assert_close(&got, &want, 2e-5, &format!("{what} f32"));
        }
    }
}

#[test]
fn the_fused_kernel_matches_the_convolutions_on_batches_volumes_and_views() {
    // The convolutions' results are scipy's (the tests above and tests/convolution.rs); the fused kernel must
    // give them to float64 rounding: 3-D volumes in a batch, 2-D batches, a transposed (strided) input, an
    // output that is every other element of a wider array, and a batch view whose leading axes do not step as
    // one (planned as convolutions, so the same), for every border rule.
    let mut rng = crate::common::Rng::new(404);
    let (vol, _) = crate::common::random::<f64>(&mut rng, &[2, 9, 13, 11]);
    let (img, _) = crate::common::random::<f64>(&mut rng, &[3, 37, 45]);
    for border in [Border::Reflect, Border::Mirror, Border::Nearest, Border::Wrap, Border::Constant(0.75)] {
        for derivative in [Derivative::Sobel, Derivative::Prewitt, Derivative::Scharr] {
            let params = GradientParams::default().derivative(derivative.clone()).border(border);
            let cases: [(&str, XData<f64>, usize); 4] = [
                ("volumes", vol.clone(), 3),
                ("images", img.clone(), 2),
                ("transposed", img.permuted_axes(&[0, 2, 1]).unwrap(), 2),
                ("frames 1..8 of each volume, as images", vol.slice_axis(1, 1..8).unwrap(), 2),
            ];
            for (what, x, rank) in cases {
                let separate = GradientMagnitude::apply(&x, params.clone().rank(rank).fused(false)).unwrap();
                // Every other element of a wider array: a strided output.
                let mut wide_shape = x.shape().to_vec();
                wide_shape.push(2);
                let wide = XData::<f64>::zeros(app(), &wide_shape).unwrap();
                let out = wide.index_axis(x.ndim(), 0).unwrap();
                let mut fused = GradientMagnitude::new(&x, &out, params.clone().rank(rank).fused(true));
                fused.init().unwrap();
                fused.launch().unwrap();
                let (a, b) = (separate.to_vec().unwrap(), out.contiguous().unwrap().to_vec().unwrap());
                let scale = a.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                let worst = a.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
                assert!(
                    worst <= 1e-14,
                    "{what} {derivative:?} {border:?}: {worst:.2e} ({})",
                    fused.strategy().unwrap()
                );
            }
        }
    }
    // 3-D Gaussians, Gaussians wider than radius 16 and single axes have no fused kernel: asking for it says so.
    let gaussian = |sigmas: Vec<f64>| GradientParams::default().derivative(Derivative::Gaussian(sigmas)).fused(true);
    for (shape, params) in [
        (&[5, 6, 7][..], gaussian(vec![1.0]).rank(3)),
        (&[5, 6][..], gaussian(vec![1.0, 4.2])),
        (&[5, 6][..], GradientParams::default().rank(1).fused(true)),
    ] {
        let x = XData::<f32>::zeros(app(), shape).unwrap();
        let e = GradientMagnitude::apply(&x, params).unwrap_err().to_string();
        assert!(e.contains("fused kernel takes sobel, prewitt or scharr over 2 or 3 axes, or a Gaussian"), "{e}");
    }
}

#[test]
fn the_fused_gaussian_matches_the_convolutions_on_every_border_and_edge() {
    // The convolutions' results are scipy's (gradient_magnitudes_match_scipy); the fused 2-D Gaussian must give
    // them to float64 rounding (its sums run in another order: 1e-13 of the largest value). Shapes are not
    // multiples of its tiles (64 columns, 16 rows; 8 rows at a time in local memory) and include images narrower and shorter than the window
    // (the border rule folds more than once), a batch, a transposed input, a strided output, and sigmas that
    // differ per axis (radii 2 and 12) or vanish along one (sigma 0: that axis neither smoothed nor
    // differentiated, as scipy skips it).
    let mut rng = crate::common::Rng::new(405);
    let (batch, _) = crate::common::random::<f64>(&mut rng, &[2, 37, 301]);
    let (small, _) = crate::common::random::<f64>(&mut rng, &[5, 9]);
    // Each border with two of the sigmas (every program is a compile: radii and border are built in).
    let sigmas = [vec![1.5], vec![0.5, 3.0], vec![0.0, 1.0], vec![2.5], vec![1.0]];
    let borders = [Border::Reflect, Border::Mirror, Border::Nearest, Border::Wrap, Border::Constant(0.75)];
    for (k, border) in borders.into_iter().enumerate() {
        for sigmas in [&sigmas[k], &sigmas[(k + 2) % 5]] {
            let params = GradientParams::default().derivative(Derivative::Gaussian(sigmas.clone())).border(border);
            let cases: [(&str, XData<f64>); 3] = [
                ("a batch", batch.clone()),
                ("transposed", batch.permuted_axes(&[0, 2, 1]).unwrap()),
                ("5 × 9", small.clone()),
            ];
            for (what, x) in cases {
                let separate = GradientMagnitude::apply(&x, params.clone().rank(2).fused(false)).unwrap();
                let mut wide_shape = x.shape().to_vec();
                wide_shape.push(2);
                let wide = XData::<f64>::zeros(app(), &wide_shape).unwrap();
                let out = wide.index_axis(x.ndim(), 0).unwrap();
                let mut fused = GradientMagnitude::new(&x, &out, params.clone().rank(2).fused(true));
                fused.init().unwrap();
                assert!(fused.strategy().unwrap().fused, "{what} {sigmas:?}: not fused");
                fused.launch().unwrap();
                let (a, b) = (separate.to_vec().unwrap(), out.contiguous().unwrap().to_vec().unwrap());
                let scale = a.iter().fold(1e-300f64, |m, v| m.max(v.abs()));
                let worst = a.iter().zip(&b).map(|(p, q)| (p - q).abs()).fold(0.0, f64::max) / scale;
                assert!(worst <= 1e-13, "{what} sigmas {sigmas:?} {border:?}: {worst:.2e}");
            }
        }
    }
    // float32 against the float64 convolutions: rounding of sums of up to 25 × 25 taps.
    let (x, _) = crate::common::random::<f64>(&mut rng, &[3, 70, 131]);
    let want =
        GradientMagnitude::apply(&x, GradientParams::default().derivative(Derivative::Gaussian(vec![2.0])).rank(2))
            .unwrap()
            .to_vec()
            .unwrap();
    let x32 = XData::from_slice(app(), x.shape(), &x.to_vec().unwrap().iter().map(|&v| v as f32).collect::<Vec<_>>())
        .unwrap();
    let params = GradientParams::default().derivative(Derivative::Gaussian(vec![2.0])).rank(2).fused(true);
    let got = GradientMagnitude::apply(&x32, params).unwrap().to_vec().unwrap();
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst = want.iter().zip(&got).map(|(p, &q)| (p - f64::from(q)).abs()).fold(0.0, f64::max) / scale;
    assert!(worst <= 2e-6, "float32 fused Gaussian: {worst:.2e}");
}

#[test]
fn derivative_refusals_name_the_problem() {
    let e = Filter::<f32>::named("gaussian:1:0,1,2", 2).unwrap_err().to_string();
    assert!(e.contains("3 orders for 2 sigmas"), "{e}");
    let e = Filter::<f32>::named("box:3:1", 2).unwrap_err().to_string();
    assert!(e.contains("only gaussian takes a second parameter"), "{e}");
    let x = XData::<f32>::zeros(app(), &[5, 6]).unwrap();
    let e = GradientMagnitude::apply(&x, GradientParams::default().rank(3)).unwrap_err().to_string();
    assert!(e.contains("asked for 3 of shape [5, 6]"), "{e}");
    let e =
        GradientMagnitude::apply(&x, GradientParams::default().derivative(Derivative::Gaussian(vec![1.0, 2.0, 3.0])))
            .unwrap_err()
            .to_string();
    assert!(e.contains("3 sigmas for a gradient over 2 axes"), "{e}");
}

#[test]
fn a_threshold_after_the_gradient_magnitude_fuses_and_gives_the_unfused_mask() {
    use cliper::{Elementwise, EpilogueStrategy, Expr, Pipeline};
    // Edge detection as a chain: |∇x| > t (t: the median magnitude) and, from both, |∇x|·mask. The same stages
    // run one by one give
    // the same arrays: the magnitude is stored, then the stages compute from that very value (exact on PoCL;
    // a GPU compiler may contract a multiply-add differently in the two programs, hence 2ε).
    let cpu = app().device().kind == cliper::DeviceKind::Cpu;
    let cases: [(&[usize], Derivative, Option<bool>); 5] = [
        (&[2, 45, 61], Derivative::Sobel, Some(true)),
        (&[9, 14, 23], Derivative::Scharr, Some(true)),
        (&[45, 61], Derivative::Gaussian(vec![2.0]), Some(true)),
        (&[45, 61], Derivative::Prewitt, Some(false)),
        (&[45, 61], Derivative::Sobel, None),
    ];
    for (shape, derivative, fused) in cases {
        let n: usize = shape.iter().product();
        let values: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 / 1000.0).collect();
        let x = XData::from_slice(app(), shape, &values).unwrap();
        let mut params = GradientParams::default().derivative(derivative.clone()).rank(shape.len().min(3));
        params.fused = fused;
        let mut sorted = GradientMagnitude::apply(&x, params.clone()).unwrap().to_vec().unwrap();
        sorted.sort_by(f32::total_cmp);
        let t = f64::from(sorted[n / 2]);
        let mut results = Vec::new();
        let mut how = None;
        for together in [true, false] {
            let [g, mask, edges] = [(); 3].map(|_| XData::<f32>::zeros(app(), shape).unwrap());
            let threshold = Elementwise::new(&[&g], &mask, Expr::input(0).greater(t));
            let product = Elementwise::new(&[&g, &mask], &edges, Expr::input(0) * Expr::input(1));
            if together {
                let mut p = Pipeline::new(app());
                let grad = p.push_shared(GradientMagnitude::new(&x, &g, params.clone()));
                p.push(Box::new(threshold));
                p.push(Box::new(product));
                p.run().unwrap();
                how = grad.lock().unwrap().epilogue();
            } else {
                GradientMagnitude::new(&x, &g, params.clone()).run().unwrap();
                let (mut t, mut m) = (threshold, product);
                t.run().unwrap();
                m.run().unwrap();
            }
            results.push([g.to_vec().unwrap(), mask.to_vec().unwrap(), edges.to_vec().unwrap()]);
        }
        let what = format!("{derivative:?} on {shape:?}, fused {fused:?}");
        for (got, want) in results[0].iter().zip(&results[1]) {
            for (i, (a, b)) in got.iter().zip(want).enumerate() {
                assert!((a - b).abs() <= 2.0 * f32::EPSILON * (b.abs() + 1.0), "{what}, element {i}: {a} vs {b}");
            }
        }
        assert!(results[1][1].contains(&1.0) && results[1][1].contains(&0.0), "{what}");
        let in_kernel = fused == Some(true) || (fused.is_none() && !cpu);
        let want =
            if in_kernel { EpilogueStrategy::InKernel { stages: 2 } } else { EpilogueStrategy::Separate { stages: 2 } };
        assert_eq!(how, Some(want), "{what}");
    }
}
