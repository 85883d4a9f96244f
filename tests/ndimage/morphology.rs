//! Binary morphology against scipy.ndimage (tests/fixtures/make_morphology.py, scipy 1.17): exact, every element
//! (the results are 0 and 1), in float32 and float64, with the default cross, full connectivity, an asymmetric
//! structure (dilation reflects it), origins, iterations (including "until nothing changes"), border values 0
//! and 1, 2-D and 3-D.

use crate::common::app;
use cliper::{
    BinaryMorphology, BinaryParams, DistanceParams, DistanceTransform, Footprint, HostArray, MorphologyOp, RealElement,
    XData, read_npy,
};
use ndarray::ArrayD;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/morphology/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn ell() -> Footprint {
    let a = fixture("ell");
    Footprint::new(a.shape(), a.iter().map(|&v| v != 0.0).collect()).unwrap()
}

fn cases() -> Vec<(&'static str, &'static str, BinaryParams)> {
    use MorphologyOp::*;
    let p = BinaryParams::new;
    vec![
        ("erosion_c1", "b2", p(Erosion)),
        ("erosion_c2_it3_bv1", "b2", p(Erosion).connectivity(2).iterations(3).border_value(true)),
        ("erosion_c1_until_stable", "b2", p(Erosion).iterations(0)),
        ("dilation_c1", "b2", p(Dilation)),
        ("dilation_c2_it2_bv1", "b2", p(Dilation).connectivity(2).iterations(2).border_value(true)),
        ("dilation_ell", "b2", p(Dilation).structure(ell())),
        ("opening_c1_it2", "b2", p(Opening).iterations(2)),
        ("closing_c2", "b2", p(Closing).connectivity(2)),
        ("closing_ell_origin", "b2", p(Closing).structure(ell()).origin(&[1, 0])),
        ("erosion3d_c1", "b3", p(Erosion)),
        ("dilation3d_c3_bv1", "b3", p(Dilation).connectivity(3).border_value(true)),
    ]
}

fn check<T: RealElement>() {
    for (name, input, params) in cases() {
        let x = fixture(input);
        let xd = XData::from_ndarray(app(), &x.mapv(|v| T::from_c64(v.into()))).unwrap();
        let got = BinaryMorphology::apply(&xd, params).unwrap().to_vec().unwrap();
        let want = fixture(name);
        let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g.to_c64().re != **w).count();
        assert_eq!(wrong, 0, "{name} ({}): {wrong} of {} elements differ from scipy's", T::NAME, want.len());
    }
}

#[test]
fn binary_morphology_equals_scipy_in_f32() {
    check::<f32>();
}

#[test]
fn binary_morphology_equals_scipy_in_f64() {
    check::<f64>();
}

/// distance_transform_edt: exact in scipy; here the squared distances are sums of squared integers times squared
/// spacings, so float64 agrees within a few ulps (1e-12 relative) and float32 within 1e-6 (its rounding of the
/// squared spacings and sums).
fn check_distance<T: RealElement>(tol: f64) {
    for (name, input, sampling) in [
        ("edt_2d", "b2", vec![1.0]),
        ("edt_2d_sampling", "b2", vec![2.5, 0.7]),
        ("edt_3d_sampling", "b3", vec![3.0, 1.0, 0.5]),
    ] {
        let x = fixture(input);
        let xd = XData::from_ndarray(app(), &x.mapv(|v| T::from_c64(v.into()))).unwrap();
        let got =
            DistanceTransform::apply(&xd, DistanceParams::default().sampling(&sampling)).unwrap().to_vec().unwrap();
        let want = fixture(name);
        for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
            let g = g.to_c64().re;
            assert!((g - w).abs() <= tol * w.max(1.0), "{name} ({}) [{i}]: {g} vs scipy {w}", T::NAME);
        }
    }
}

#[test]
fn distance_transform_matches_scipy() {
    check_distance::<f64>(1e-12);
    check_distance::<f32>(1e-6);
    // No zero element: no distance (scipy measures to a point outside the array instead).
    let ones = XData::from_slice(app(), &[2, 2], &[1.0f32; 4]).unwrap();
    let d = DistanceTransform::apply(&ones, DistanceParams::default()).unwrap().to_vec().unwrap();
    assert!(d.iter().all(|v| v.is_infinite()), "{d:?}");
}

#[test]
fn refusals_name_the_problem() {
    let x2 = XData::<f32>::zeros(app(), &[6, 7]).unwrap();
    let e = DistanceTransform::apply(&x2, DistanceParams::default().sampling(&[1.0, 0.0])).unwrap_err().to_string();
    assert!(e.contains("spacings must be positive and finite, got 0"), "{e}");
    let x = x2;
    let e = BinaryMorphology::apply(&x, BinaryParams::new(MorphologyOp::Erosion).connectivity(3)).unwrap_err();
    assert!(e.to_string().contains("connectivity 3 is not within 1 to 2"), "{e}");
    let e =
        BinaryMorphology::apply(&x, BinaryParams::new(MorphologyOp::Dilation).structure(ell()).rank(1)).unwrap_err();
    assert!(e.to_string().contains("[3, 2]"), "{e}");
    let y = XData::<f32>::zeros(app(), &[6, 8]).unwrap();
    let mut p = BinaryMorphology::new(&x, &y, BinaryParams::new(MorphologyOp::Opening));
    let e = cliper::Process::run(&mut p).unwrap_err().to_string();
    assert!(e.contains("[6, 7]") && e.contains("[6, 8]"), "{e}");
}
