//! scipy.ndimage's Fourier filters against scipy (tests/fixtures/make_fourier.py, scipy 1.17): full spectra in
//! 2-D and 3-D, a real FFT along axis 0 (`n` = 13), real input (kept real; the shift made complex128), sizes ≤ 0,
//! Gaussian factors past scipy's cut, the ellipsoid's 1-D, 2-D (Bessel J1) and 3-D forms; double and single
//! precision. Tolerances: in double the factors are the same formulas in double as scipy's (J1 from a series and
//! Hankel's expansion, within 1e-12 of scipy.special.j1), so each element is within 1e-11·max(1, |input|); in single
//! the input and result are each rounded to f32 (6e-8 relative), so 1e-6·max(1, |input|).

use crate::common::app;
use cliper::{Element, FourierFilter, FourierKind, FourierParams, HostArray, Process, XData, read_npy};
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};

fn fixture(name: &str) -> ArrayD<Complex64> {
    match read_npy(format!("{}/tests/fixtures/fourier/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::C64(a) => a,
        HostArray::F64(a) => a.mapv(|v| Complex64::new(v, 0.0)),
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn cases() -> Vec<(&'static str, &'static str, FourierParams)> {
    use FourierKind::*;
    let p = FourierParams::new;
    vec![
        ("gaussian_full2", "full2", p(Gaussian, &[1.5, 0.75])),
        ("gaussian_half2_n13_axis0", "half2", p(Gaussian, &[2.0]).real(13, 0)),
        ("gaussian_full3", "full3", p(Gaussian, &[0.5, 1.0, 2.5])),
        ("gaussian_real2_cut", "real2", p(Gaussian, &[6.0])),
        ("uniform_full2", "full2", p(Uniform, &[3.0, 5.5])),
        ("uniform_half2_n13_axis0", "half2", p(Uniform, &[4.0, 2.0]).real(13, 0)),
        ("uniform_real2_size0", "real2", p(Uniform, &[0.0, -2.0])),
        ("ellipsoid_full2", "full2", p(Ellipsoid, &[7.0, 9.5])),
        ("ellipsoid_half2_n13_axis0", "half2", p(Ellipsoid, &[20.0, 6.0]).real(13, 0)),
        ("ellipsoid_full3", "full3", p(Ellipsoid, &[3.0, 4.5, 2.0])),
        ("shift_full2", "full2", p(Shift, &[2.5, -3.25])),
        ("shift_half2_n13_axis0", "half2", p(Shift, &[1.5, 4.0]).real(13, 0)),
        ("shift_real2", "real2", p(Shift, &[1.75])),
    ]
}

/// Runs `params` on `x` as element type `T` into `O`; the result widened to complex double.
fn run<T: Element, O: Element>(x: &ArrayD<Complex64>, params: FourierParams) -> Vec<Complex64> {
    let xd = XData::from_ndarray(app(), &x.mapv(T::from_c64)).unwrap();
    let out = XData::<O>::zeros(app(), x.shape()).unwrap();
    FourierFilter::new(&xd, &out, params).run().unwrap();
    out.to_vec().unwrap().into_iter().map(Element::to_c64).collect()
}

fn compare(name: &str, x: &ArrayD<Complex64>, got: &[Complex64], tolerance: f64) {
    let want = fixture(name);
    let worst = got
        .iter()
        .zip(want.iter())
        .zip(x.iter())
        .map(|((g, w), x)| (g - w).norm() / x.norm().max(1.0))
        .fold(0.0, f64::max);
    assert!(
        worst <= tolerance,
        "{name}: an element is {worst:e}·max(1, |input|) from scipy's (tolerance {tolerance:e})"
    );
}

/// Every case in double (complex128 spectra, float64 real input) and in single precision.
fn check(single: bool) {
    for (name, input, params) in cases() {
        let x = fixture(input);
        let real = input.starts_with("real");
        let shift = params.kind == FourierKind::Shift;
        let got = match (single, real, shift) {
            (false, false, _) => run::<Complex64, Complex64>(&x, params),
            (false, true, false) => run::<f64, f64>(&x, params),
            (false, true, true) => run::<f64, Complex64>(&x, params),
            (true, false, _) => run::<Complex32, Complex32>(&x, params),
            (true, true, false) => run::<f32, f32>(&x, params),
            (true, true, true) => run::<f32, Complex64>(&x, params),
        };
        compare(name, &x, &got, if single { 1e-6 } else { 1e-11 });
    }
}

#[test]
fn fourier_filters_match_scipy_in_double() {
    check(false);
}

#[test]
fn fourier_filters_match_scipy_in_single() {
    check(true);
}

#[test]
fn fourier_ellipsoid_of_one_axis_is_sinc() {
    let x = fixture("real2").slice_move(ndarray::s![0, ..]).into_dyn();
    let got = run::<f64, f64>(&x, FourierParams::new(FourierKind::Ellipsoid, &[5.0]));
    compare("ellipsoid_real1", &x, &got, 1e-11);
}

#[test]
fn fourier_filters_refuse_in_one_line() {
    let x = XData::from_slice(app(), &[2, 3, 2, 2], &[1.0f64; 24]).unwrap();
    let y = XData::<f64>::zeros(app(), &[2, 3, 2, 2]).unwrap();
    let c = XData::<Complex64>::zeros(app(), &[2, 3, 2, 2]).unwrap();
    let refusals = [
        FourierFilter::new(&x, &y, FourierParams::new(FourierKind::Ellipsoid, &[2.0])).run(),
        FourierFilter::new(&x, &y, FourierParams::new(FourierKind::Gaussian, &[1.0, 2.0])).run(),
        FourierFilter::new(&x, &y, FourierParams::new(FourierKind::Gaussian, &[1.0]).real(5, 4)).run(),
        FourierFilter::new(&x, &y, FourierParams::new(FourierKind::Gaussian, &[f64::NAN])).run(),
        FourierFilter::new(&x, &y, FourierParams::new(FourierKind::Shift, &[1.0])).run(),
        FourierFilter::new(&x, &c, FourierParams::new(FourierKind::Uniform, &[1.0])).run(),
    ];
    for (k, r) in refusals.into_iter().enumerate() {
        let message = r.expect_err("refused").to_string();
        assert!(!message.contains('\n') && message.contains("fourier_"), "refusal {k}: {message}");
    }
}
