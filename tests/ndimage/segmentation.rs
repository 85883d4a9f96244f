//! remove_small_objects and remove_small_holes against scikit-image 0.26 (tests/fixtures/make_segmentation.py):
//! the results are 0/1 or labels, so every element must equal skimage's exactly, in float32 and float64 — random
//! masks 37×45 and 13×17×11 (no tile divides them), connectivity 1 to ndim, max_size (inclusive) and the
//! deprecated min_size (which 0.26 passes on as max_size), and a labelled input counted per value.

use crate::common::app;
use cliper::{HostArray, RealElement, RemoveSmall, RemoveSmallParams, SizeLimit, SmallTarget, XData, read_npy};
use ndarray::ArrayD;
use num_complex::Complex64;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/segmentation/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn upload<T: RealElement>(a: &ArrayD<f64>) -> XData<T> {
    XData::from_ndarray(app(), &a.mapv(|v| T::from_c64(Complex64::new(v, 0.0)))).unwrap()
}

fn check<T: RealElement>() {
    let objects = |limit| RemoveSmallParams::new(SmallTarget::Objects, limit);
    let holes = |limit| RemoveSmallParams::new(SmallTarget::Holes, limit);
    let cases = [
        ("objects_m2_c1_max5", "m2", objects(SizeLimit::AtMost(5))),
        ("objects_m2_c2_max5", "m2", objects(SizeLimit::AtMost(5)).connectivity(2)),
        ("holes_m2_c1_max4", "m2", holes(SizeLimit::AtMost(4))),
        ("holes_m2_c2_max4", "m2", holes(SizeLimit::AtMost(4)).connectivity(2)),
        ("objects_m3_c1_max3", "m3", objects(SizeLimit::AtMost(3))),
        ("objects_m3s_c3_max3", "m3s", objects(SizeLimit::AtMost(3)).connectivity(3)),
        ("holes_m3h_c1_max2", "m3h", holes(SizeLimit::AtMost(2))),
        ("holes_m3h_c3_max2", "m3h", holes(SizeLimit::AtMost(2)).connectivity(3)),
        // skimage 0.26 passes the deprecated min_size on as max_size (inclusive): the same limit.
        ("objects_m2_c1_min5", "m2", objects(SizeLimit::AtMost(5))),
        ("objects_lab2_max30", "lab2", objects(SizeLimit::AtMost(30)).labelled(true)),
    ];
    for (name, input, params) in cases {
        let want = fixture(name);
        let got = RemoveSmall::apply(&upload::<T>(&fixture(input)), params).unwrap().to_vec().unwrap();
        let got: Vec<f64> = got.iter().map(|v| v.to_c64().re).collect();
        let wrong = got.iter().zip(want.iter()).filter(|(g, w)| g != w).count();
        assert_eq!(wrong, 0, "{name}: {wrong} elements differ from skimage");
        // The fixture must remove something, or the test could not fail.
        assert_ne!(want, fixture(input).mapv(|v| if name.starts_with("holes") { f64::from(v != 0.0) } else { v }));
    }
}

#[test]
fn remove_small_matches_skimage_f32() {
    check::<f32>();
}

#[test]
fn remove_small_matches_skimage_f64() {
    check::<f64>();
}

#[test]
fn negative_labels_are_refused_in_one_line() {
    let x = XData::from_slice(app(), &[2, 3], &[0.0f64, 1.0, -2.0, 1.0, 0.0, 3.0]).unwrap();
    let params = RemoveSmallParams::new(SmallTarget::Objects, SizeLimit::AtMost(1)).labelled(true);
    let message = RemoveSmall::apply(&x, params).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("negative labels") && !message.contains('\n'), "{message}");
}
