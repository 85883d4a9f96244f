//! Resampling against scipy.ndimage (tests/fixtures/make_resample.py, scipy 1.17, float64): zoom, shift,
//! affine_transform, rotate, map_coordinates and spline_filter on 13×17 and 7×9×11 random data (no tile size
//! divides them), in every mode, spline orders 0 to 5, grid mode, without prefilter, real and complex.
//!
//! Tolerances: data in [0, 1). float64 — the prefilter's recursions and the ≤ 216-tap sums run in another order
//! than scipy's and the initial sums stop at z^i < 1e-3 ulp: the observed differences are ~1e-15, except where
//! scipy's own `reflect`/`nearest` prefilter on short axes is off: on a 9-sample line its cubic coefficients
//! differ from the exact solution (the filter of the line extended symmetrically 50 periods, which ours equal to
//! 2e-16) by 2.3e-11, its quintic ones on 11 samples by 6e-9 — so 1e-10 absolute, and the order-5 reflect case
//! 1e-8. float32 — the same in float32 (scipy computes in float64 and rounds): the B-spline
//! coefficients of data in [0, 1) reach ±2, and the recursions lose a few ulps each: observed ≤ 4.7e-7 (PoCL),
//! 2e-6 absolute. Order 0
//! copies samples (the coordinates are float64 on both sides): exact in float64, the input's own rounding
//! (≤ 6e-8) in float32.

use crate::common::app;
use cliper::{
    HostArray, InterpMode, Interpolation, MapCoordinates, Resample, ResampleParams, ResampleStrategy, SplineFilter,
    SplineParams, XData, read_npy,
};
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};

const MODES: [&str; 7] = ["constant", "grid-constant", "nearest", "reflect", "mirror", "wrap", "grid-wrap"];

fn fixture(name: &str) -> HostArray {
    read_npy(format!("{}/tests/fixtures/resample/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn real(name: &str) -> ArrayD<f64> {
    match fixture(name) {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn complex(name: &str) -> ArrayD<Complex64> {
    match fixture(name) {
        HostArray::C64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn assert_close(got: &[f64], want: &ArrayD<f64>, tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: {} values, scipy {}", got.len(), want.len());
    let worst = got.iter().zip(want.iter()).map(|(g, w)| (g - w).abs()).fold(0.0f64, f64::max);
    assert!(worst <= tol, "{what}: worst difference {worst:e} > {tol:e}");
}

/// One case: the fixture name, the input, and the params.
enum Case {
    Resample(&'static str, ResampleParams),
    Map(&'static str, &'static str, Interpolation),
    Spline(&'static str, SplineParams),
}

fn name_of(mode: &str, what: &str, order: usize) -> String {
    format!("{what}_o{order}_{mode}")
}

/// The fixture's cases (make_resample.py builds the same table).
fn cases() -> Vec<(String, Case)> {
    let mut v = Vec::new();
    for mode in MODES {
        let m = InterpMode::parse(mode).unwrap();
        for order in [0, 1, 3] {
            let p = |t: ResampleParams| t.order(order).mode(m).cval(-0.5);
            v.push((name_of(mode, "zoom", order), Case::Resample("a2", p(ResampleParams::zoom(&[1.7, 0.6])))));
            v.push((name_of(mode, "shift", order), Case::Resample("a2", p(ResampleParams::shift(&[2.3, -4.6])))));
            v.push((
                name_of(mode, "map", order),
                Case::Map("a2", "coords2", Interpolation::new(order).mode(m).cval(-0.5)),
            ));
        }
        let affine = ResampleParams::affine(&[vec![0.9, -0.3], vec![0.4, 1.2]], &[1.5, -2.0]).output_shape(&[15, 14]);
        v.push((name_of(mode, "affine", 3), Case::Resample("a2", affine.order(3).mode(m).cval(-0.5))));
        v.push((name_of(mode, "spline", 3), Case::Spline("a2", SplineParams::new(3).mode(m))));
    }
    for order in [2, 4, 5] {
        let zoom = ResampleParams::zoom(&[1.7, 0.6]).order(order).mode(InterpMode::Mirror);
        v.push((name_of("mirror", "zoom", order), Case::Resample("a2", zoom)));
        let map = Interpolation::new(order).mode(InterpMode::Reflect);
        v.push((name_of("reflect", "map", order), Case::Map("a2", "coords2", map)));
        let spline = SplineParams::new(order).mode(InterpMode::GridWrap);
        v.push((name_of("grid-wrap", "spline", order), Case::Spline("a2", spline)));
    }
    let grid = ResampleParams::zoom(&[2.0, 0.5]).grid_mode(true);
    v.push(("zoom_grid_o3_grid-constant".into(), Case::Resample("a2", grid.clone().mode(InterpMode::GridConstant))));
    v.push(("zoom_grid_o1_reflect".into(), Case::Resample("a2", grid.order(1).mode(InterpMode::Reflect))));
    v.push(("zoom3_o3_constant".into(), Case::Resample("a3", ResampleParams::zoom(&[2.0, 1.5, 0.7]))));
    let yx = ResampleParams::zoom(&[1.0, 1.5, 2.0]).mode(InterpMode::Nearest);
    v.push(("zoom3_o3_nearest_yx".into(), Case::Resample("a3", yx)));
    let shift3 = ResampleParams::shift(&[0.5, -1.25, 2.75]).order(2).mode(InterpMode::Nearest);
    v.push(("shift3_o2_nearest".into(), Case::Resample("a3", shift3)));
    let raw = ResampleParams::shift(&[0.3, 0.6]).prefilter(false);
    v.push(("shift_noprefilter_o3".into(), Case::Resample("a2", raw)));
    let diag = ResampleParams::affine(&[vec![0.8, 1.3]], &[0.5, -1.0]).mode(InterpMode::Nearest);
    v.push(("affine_diag_o3".into(), Case::Resample("a2", diag)));
    let homog = ResampleParams::affine(&[vec![0.9, -0.3, 1.5], vec![0.4, 1.2, -2.0], vec![0.0, 0.0, 1.0]], &[0.0]);
    v.push(("affine_homog_o1".into(), Case::Resample("a2", homog.order(1).mode(InterpMode::Reflect))));
    let m3 = [vec![1.0, 0.1, 0.0], vec![-0.2, 0.9, 0.3], vec![0.1, 0.0, 1.1]];
    let affine3 = ResampleParams::affine(&m3, &[0.5, 1.0, -1.0]).order(1).mode(InterpMode::Mirror);
    v.push(("affine3_o1_mirror".into(), Case::Resample("a3", affine3)));
    v.push(("rotate30_o3".into(), Case::Resample("a2", ResampleParams::rotate(30.0))));
    let flat = ResampleParams::rotate(30.0).order(1).mode(InterpMode::Nearest).reshape(false);
    v.push(("rotate30_o1_nearest_noreshape".into(), Case::Resample("a2", flat)));
    v.push(("rotate90_o3".into(), Case::Resample("a2", ResampleParams::rotate(90.0))));
    let r3 = ResampleParams::rotate(17.0).axes(0, 2).mode(InterpMode::Mirror).reshape(false);
    v.push(("rotate3_17_axes02_o3_mirror".into(), Case::Resample("a3", r3)));
    v.push(("rotate3_40_axes12_o1".into(), Case::Resample("a3", ResampleParams::rotate(40.0).axes(1, 2).order(1))));
    let map3 = Interpolation::new(3).mode(InterpMode::GridWrap);
    v.push(("map3_o3_grid-wrap".into(), Case::Map("a3", "coords3", map3)));
    let s1 = SplineParams::new(3).axis(0).mode(InterpMode::Reflect);
    v.push(("spline1d_o3_axis0_reflect".into(), Case::Spline("a2", s1)));
    v.push(("spline3_o5_mirror".into(), Case::Spline("a3", SplineParams::new(5).mode(InterpMode::Mirror))));
    v
}

fn run<T: cliper::RealElement>(case: &Case, input: &ArrayD<f64>) -> Vec<f64> {
    let cast = |a: &ArrayD<f64>| a.mapv(|v| T::from_c64(Complex64::new(v, 0.0)));
    let x = XData::<T>::from_ndarray(app(), &cast(input)).unwrap();
    let y = match case {
        Case::Resample(_, p) => Resample::apply(&x, p.clone()),
        Case::Map(_, c, p) => {
            let c = XData::<T>::from_ndarray(app(), &cast(&real(c))).unwrap();
            MapCoordinates::apply(&x, &c, *p)
        }
        Case::Spline(_, p) => SplineFilter::apply(&x, p.clone()),
    };
    y.unwrap().to_vec().unwrap().iter().map(|v| v.to_c64().re).collect()
}

#[test]
fn resampling_matches_scipy_in_float64() {
    for (name, case) in cases() {
        let input = match &case {
            Case::Resample(i, _) | Case::Map(i, _, _) | Case::Spline(i, _) => real(i),
        };
        let want = real(&name);
        let tol = match name.as_str() {
            n if n.contains("_o0_") => 0.0,
            "map_o5_reflect" => 1e-8,
            _ => 1e-10,
        };
        assert_close(&run::<f64>(&case, &input), &want, tol, &format!("{name} f64"));
    }
}

#[test]
fn resampling_matches_scipy_in_float32() {
    // Order 1 and 3 in every mode for zoom (the separable passes) and map_coordinates (the gather), plus the
    // 3-D cases: one program per order and path (PoCL builds each in 1–3 s).
    for (name, case) in cases() {
        let keep = (name.starts_with("zoom_o") || name.starts_with("map_o") || name.starts_with("rotate3"))
            && !name.contains("_o2_")
            && !name.contains("_o4_")
            && !name.contains("_o5_");
        if !keep {
            continue;
        }
        let input = match &case {
            Case::Resample(i, _) | Case::Map(i, _, _) | Case::Spline(i, _) => real(i),
        };
        let want = real(&name);
        let tol = if name.contains("_o0_") { 1e-7 } else { 2e-6 };
        assert_close(&run::<f32>(&case, &input), &want, tol, &format!("{name} f32"));
    }
}

#[test]
fn complex_data_resamples_as_its_parts() {
    let c2 = complex("c2");
    for (name, params) in [
        ("czoom_o3_reflect", ResampleParams::zoom(&[1.4, 2.1]).mode(InterpMode::Reflect)),
        ("crotate_o3", ResampleParams::rotate(25.0).cval(0.5)),
    ] {
        let want = complex(name);
        let x = XData::from_ndarray(app(), &c2).unwrap();
        let got = Resample::apply(&x, params.clone()).unwrap().to_vec().unwrap();
        let worst = got.iter().zip(want.iter()).map(|(g, w)| (g - w).norm()).fold(0.0f64, f64::max);
        assert!(worst < 1e-10, "{name} c64: {worst:e}");
        let x32 = XData::from_ndarray(app(), &c2.mapv(|v| Complex32::new(v.re as f32, v.im as f32))).unwrap();
        let got = Resample::apply(&x32, params).unwrap().to_vec().unwrap();
        let worst = got
            .iter()
            .zip(want.iter())
            .map(|(g, w)| (Complex64::new(g.re as f64, g.im as f64) - w).norm())
            .fold(0.0f64, f64::max);
        assert!(worst < 3e-6, "{name} c32: {worst:e}");
    }
}

#[test]
fn strategies_and_refusals_say_what_they_are() {
    let x = XData::<f64>::from_ndarray(app(), &real("a3")).unwrap();
    // A zoom that leaves axis 0 alone interpolates two axes, shrinking ones first.
    let mut p = Resample::new(&x, &XData::zeros(app(), &[7, 4, 22]).unwrap(), ResampleParams::zoom(&[1.0, 0.5, 2.0]));
    cliper::Process::init(&mut p).unwrap();
    let Some(ResampleStrategy::Separable { prefilter, passes }) = p.strategy() else { panic!("{:?}", p.strategy()) };
    assert_eq!((prefilter.passes(), passes), (2, vec![1, 2]));
    // Identity: a copy.
    let mut p = Resample::new(&x, &XData::zeros(app(), &[7, 9, 11]).unwrap(), ResampleParams::shift(&[0.0]));
    cliper::Process::init(&mut p).unwrap();
    assert_eq!(p.strategy(), Some(ResampleStrategy::Copy));
    // A wrong output shape names both shapes.
    let mut p = Resample::new(&x, &XData::zeros(app(), &[7, 9, 10]).unwrap(), ResampleParams::zoom(&[2.0]));
    let e = cliper::Process::init(&mut p).unwrap_err().to_string();
    assert!(e.contains("[14, 18, 22]") && e.contains("[7, 9, 10]"), "{e}");
    // Order 6, a bad mode, a matrix of the wrong size.
    assert!(Resample::<f64>::output_shape(&[4, 5], &ResampleParams::zoom(&[2.0]).order(6)).is_err());
    assert!(InterpMode::parse("edge").unwrap_err().to_string().contains("edge"));
    let e =
        Resample::<f64>::output_shape(&[4, 5], &ResampleParams::affine(&vec![vec![1.0; 4]; 4], &[0.0])).unwrap_err();
    assert!(e.to_string().contains("4×4"), "{e}");
    // Four interpolated axes are refused, naming them.
    let e = Resample::<f64>::apply(&XData::zeros(app(), &[3, 3, 3, 3]).unwrap(), ResampleParams::zoom(&[2.0]))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("axes 0 to 3 of 4"), "{e}");
}
