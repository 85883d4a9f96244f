//! Derivative filters against scipy.ndimage (tests/fixtures/make_derivatives.py, scipy 1.17, float64):
//! gaussian_filter with derivative orders, uniform_filter, sobel, prewitt, Scharr's weights, and the gradient
//! magnitudes (gaussian_gradient_magnitude, generic_gradient_magnitude with sobel/prewitt) in 2-D and 3-D.

use crate::common::app;
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
        let params = GradientParams::default().derivative(derivative).border(Border::scipy(mode).unwrap());
        let got = GradientMagnitude::apply(&XData::from_ndarray(app(), x).unwrap(), params.clone()).unwrap();
        assert_close(&got.to_vec().unwrap(), &want, 1e-12, &format!("{name} f64"));
        let got =
            GradientMagnitude::apply(&XData::from_ndarray(app(), &x.mapv(|v| v as f32)).unwrap(), params).unwrap();
        let got: Vec<f64> = got.to_vec().unwrap().iter().map(|&v| v as f64).collect();
        assert_close(&got, &want, 2e-5, &format!("{name} f32"));
    }
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
