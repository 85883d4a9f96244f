//! peak_local_max against scikit-image 0.26 (tests/fixtures/make_feature.py): random smoothed images quantised to
//! 1/8 steps (so plateaus and equal peaks happen), 37×45 and 13×17×11 (no tile divides them), min_distance 0 to 4,
//! thresholds, every form of exclude_border, num_peaks, footprints, p-norms 1, 2, 3 and ∞, labels with
//! num_peaks_per_label — in float32 and float64. The result is a list of integer coordinates in skimage's order,
//! so it must equal skimage's exactly (no tolerance: the order is part of the answer).

use crate::common::app;
use cliper::{
    ExcludeBorder, Footprint, HostArray, PeakCoordinates, PeakLocalMax, PeakMark, PeakParams, PeakStrategy, Process,
    RealElement, XData, read_npy,
};
use ndarray::ArrayD;
use num_complex::Complex64;
use serde_json::Value;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/feature/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn upload<T: RealElement>(a: &ArrayD<f64>) -> XData<T> {
    XData::from_ndarray(app(), &a.mapv(|v| T::from_c64(Complex64::new(v, 0.0)))).unwrap()
}

/// skimage's keywords of a case as [`PeakParams`].
fn params(case: &Value) -> PeakParams {
    let p = &case["params"];
    let mut params = PeakParams::new(p["min_distance"].as_u64().unwrap_or(1) as usize);
    params.threshold_abs = p["threshold_abs"].as_f64();
    params.threshold_rel = p["threshold_rel"].as_f64();
    params.num_peaks = p["num_peaks"].as_u64().map(|n| n as usize);
    params.num_peaks_per_label = p["num_peaks_per_label"].as_u64().map(|n| n as usize);
    params.p_norm = p["p_norm"].as_f64().unwrap_or(f64::INFINITY);
    params.exclude_border = match &p["exclude_border"] {
        Value::Bool(false) => ExcludeBorder::Width(0),
        Value::Number(n) => ExcludeBorder::Width(n.as_u64().unwrap() as usize),
        Value::Array(w) => ExcludeBorder::PerAxis(w.iter().map(|v| v.as_u64().unwrap() as usize).collect()),
        _ => ExcludeBorder::MinDistance,
    };
    if let Some(name) = case["footprint"].as_str() {
        let f = fixture(name);
        params = params.footprint(Footprint::new(f.shape(), f.iter().map(|&v| v != 0.0).collect()).unwrap());
    }
    params
}

fn check<T: RealElement>(dtype: &str) {
    let path = format!("{}/tests/fixtures/feature/cases.json", env!("CARGO_MANIFEST_DIR"));
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut checked = 0;
    for case in cases.iter().filter(|c| c["dtype"] == dtype) {
        let name = case["name"].as_str().unwrap();
        let image = upload::<T>(&fixture(case["image"].as_str().unwrap()));
        let labels = case["labels"].as_str().map(|l| upload::<T>(&fixture(l)));
        let want: Vec<Vec<usize>> = case["coords"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row.as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect())
            .collect();
        let order = PeakLocalMax::apply(&image, labels.as_ref(), params(case)).unwrap();
        let got = PeakCoordinates::list(&order).unwrap();
        assert_eq!(got, want, "{name} ({dtype}): the peaks or their order differ from skimage's");
        // The process's own table (what the command line prints) lists the same rows.
        let table = XData::<f64>::zeros(app(), &[got.len(), image.ndim()]).unwrap();
        PeakCoordinates::new(&order, &table).run().unwrap();
        let rows: Vec<f64> = want.iter().flatten().map(|&c| c as f64).collect();
        assert_eq!(table.to_vec().unwrap(), rows, "{name} ({dtype}): the table");
        checked += 1;
    }
    assert_eq!(checked, 23, "every case of the fixture ran");
}

#[test]
fn peak_local_max_matches_skimage_f32() {
    check::<f32>("float32");
}

#[test]
fn peak_local_max_matches_skimage_f64() {
    check::<f64>("float64");
}

#[test]
fn a_flat_image_has_no_peaks_and_a_mask_marks_ones() {
    // skimage: "no peak for a trivial image" — every element is its window's maximum.
    let flat = XData::from_slice(app(), &[9, 11], &[2.5f32; 99]).unwrap();
    let order = PeakLocalMax::apply(&flat, None, PeakParams::new(1)).unwrap();
    assert!(PeakCoordinates::list(&order).unwrap().is_empty());
    // One bump: the mask holds a 1 there and 0 elsewhere; the strategy names the device's maximum filter.
    let mut v = vec![0.0f64; 99];
    v[4 * 11 + 5] = 1.0;
    let image = XData::from_slice(app(), &[9, 11], &v).unwrap();
    let mask = XData::<f64>::zeros(app(), &[9, 11]).unwrap();
    let mut peaks = PeakLocalMax::new(&image, None, &mask, PeakParams::new(2).mark(PeakMark::Mask));
    peaks.run().unwrap();
    assert!(matches!(peaks.strategy(), Some(PeakStrategy::MaximumFilter(_))));
    assert_eq!(mask.to_vec().unwrap(), v);
}

#[test]
fn refusals_name_the_argument_in_one_line() {
    let image = XData::from_slice(app(), &[3, 4], &[0.0f32; 12]).unwrap();
    let refused = |params: PeakParams, labels: Option<&XData<f32>>| {
        let e = PeakLocalMax::apply(&image, labels, params).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        e
    };
    assert!(refused(PeakParams::new(1).p_norm(0.5), None).contains("p_norm"));
    assert!(
        refused(PeakParams::new(1).exclude_border(ExcludeBorder::PerAxis(vec![1, 2, 3])), None)
            .contains("exclude_border")
    );
    let fp = Footprint::full(&[3, 3, 3]).unwrap();
    assert!(refused(PeakParams::new(1).footprint(fp), None).contains("footprint"));
    let other = XData::from_slice(app(), &[4, 3], &[1.0f32; 12]).unwrap();
    assert!(refused(PeakParams::new(1), Some(&other)).contains("[4, 3]"));
    let fractional = XData::from_slice(app(), &[3, 4], &[0.5f32; 12]).unwrap();
    assert!(refused(PeakParams::new(1), Some(&fractional)).contains("labels"));
    let ones = XData::from_slice(app(), &[3, 4], &[1.0f32; 12]).unwrap();
    assert!(refused(PeakParams::new(1).threshold_abs(f64::NEG_INFINITY), Some(&ones)).contains("threshold"));
    let big = XData::<f32>::zeros(app(), &[2, 2, 2, 2]).unwrap();
    assert!(PeakLocalMax::apply(&big, None, PeakParams::new(1)).unwrap_err().to_string().contains("1 to 3 axes"));
}
