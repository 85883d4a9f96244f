//! Labelling and hole filling against scipy.ndimage (tests/fixtures/make_morphology.py, scipy 1.17): label
//! numbers and 0/1 results are integers, so every element must equal scipy's, in float32 and float64 — random
//! masks with many components (13×17×19, 37×53: no tile divides them), 4-, 8-, 6-, 18- and 26-connectivity, a
//! serpentine that is one component across the whole image, a batch of two images labelled each on its own,
//! nested rings, a notch open to the edge, a 3-D cavity, and the empty and full masks.

use crate::common::app;
use cliper::{FillHoles, Footprint, HostArray, Label, LabelParams, Process, RealElement, XData, read_npy};
use ndarray::ArrayD;
use num_complex::Complex64;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/morphology/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn upload<T: RealElement>(a: &ArrayD<f64>) -> XData<T> {
    XData::from_ndarray(app(), &a.mapv(|v| T::from_c64(Complex64::new(v, 0.0)))).unwrap()
}

fn same(got: &[f64], want: &ArrayD<f64>, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let wrong: Vec<String> = got
        .iter()
        .zip(want.iter())
        .enumerate()
        .filter(|(_, (g, w))| g != w)
        .take(5)
        .map(|(i, (g, w))| format!("[{i}] {g} vs scipy {w}"))
        .collect();
    assert!(wrong.is_empty(), "{what}: {wrong:?}");
}

/// On CPU devices, labelling runs on the host unless the kernels are asked for: each case runs both ways.
fn both_ways(params: LabelParams) -> [(LabelParams, bool); 2] {
    let cpu = app().device().kind == cliper::DeviceKind::Cpu;
    [(params.clone(), cpu), (params.kernels_only(true), false)]
}

fn labels<T: RealElement>() {
    for (name, input, params) in [
        ("label_m2_c1", "m2", LabelParams::default()),
        ("label_m2_c2", "m2", LabelParams::default().connectivity(2)),
        ("label_m3_c1", "m3", LabelParams::default()),
        ("label_m3s_c2", "m3s", LabelParams::default().connectivity(2)),
        ("label_m3s_c3", "m3s", LabelParams::default().connectivity(3)),
        ("label_snake", "snake", LabelParams::default()),
        ("label_pair_rank2", "pair", LabelParams::default().rank(2)),
    ]
    .into_iter()
    .flat_map(|(name, input, params)| both_ways(params).map(|p| (name, input, p)))
    {
        let (params, on_host) = params;
        let want = fixture(name);
        let x = upload::<T>(&fixture(input));
        let y = XData::<T>::zeros(app(), x.shape()).unwrap();
        let mut label = Label::new(&x, &y, params);
        label.run().unwrap();
        assert_eq!(label.strategy().unwrap().on_host, on_host, "{name}");
        let got: Vec<f64> = y.to_vec().unwrap().iter().map(|v| v.to_c64().re).collect();
        same(&got, &want, &format!("{name} ({}, on the host: {on_host})", T::NAME));
        // The feature count per batch item: its largest label.
        let items = label.features().unwrap();
        let per_item = want.len() / items.len();
        for (k, n) in items.iter().enumerate() {
            let max = want.iter().skip(k * per_item).take(per_item).fold(0.0f64, |m, &v| m.max(v));
            assert_eq!(*n as f64, max, "{name}: item {k}");
        }
    }
}

#[test]
fn labels_equal_scipy_in_f32() {
    labels::<f32>();
}

#[test]
fn labels_equal_scipy_in_f64() {
    labels::<f64>();
}

#[test]
fn holes_fill_as_scipy_fills_them() {
    for (name, input, params) in [
        ("fill_blobs_c1", "blobs", LabelParams::default()),
        ("fill_blobs_c2", "blobs", LabelParams::default().connectivity(2)),
        ("fill_rings", "rings", LabelParams::default()),
        ("fill_cav", "cav", LabelParams::default()),
    ]
    .into_iter()
    .flat_map(|(name, input, params)| both_ways(params).map(|p| (name, input, p)))
    {
        let (params, on_host) = params;
        let want = fixture(name);
        let x = upload::<f32>(&fixture(input));
        let y = XData::<f32>::zeros(app(), x.shape()).unwrap();
        let mut fill = FillHoles::new(&x, &y, params);
        fill.run().unwrap();
        assert_eq!(fill.strategy().unwrap().on_host, on_host, "{name}");
        let got: Vec<f64> = y.to_vec().unwrap().iter().map(|&v| v as f64).collect();
        same(&got, &want, &format!("{name} (on the host: {on_host})"));
    }
}

#[test]
fn empty_full_and_refused_inputs() {
    let zeros = XData::<f64>::zeros(app(), &[5, 6]).unwrap();
    let mut label = Label::new(&zeros, &XData::zeros(app(), &[5, 6]).unwrap(), LabelParams::default());
    label.run().unwrap();
    assert_eq!(label.features().unwrap(), vec![0]);
    let ones = XData::from_slice(app(), &[5, 6], &[2.5f64; 30]).unwrap();
    assert_eq!(Label::apply(&ones, LabelParams::default()).unwrap().to_vec().unwrap(), vec![1.0; 30]);
    assert_eq!(FillHoles::apply(&zeros, LabelParams::default()).unwrap().to_vec().unwrap(), vec![0.0; 30]);
    // scipy's structures are 3 per axis and centro-symmetric; the error names the shape.
    let big = Footprint::full(&[5, 5]).unwrap();
    let e = Label::<f64>::output_shape(&[5, 6], &LabelParams::default().structure(big)).unwrap_err().to_string();
    assert!(e.contains("[5, 5]"), "{e}");
    // float32 holds labels exactly up to 2^24: a larger item is refused, naming its shape.
    let huge = XData::<f32>::zeros(app(), &[4097, 4097]).unwrap();
    let mut p = Label::new(&huge, &huge.clone(), LabelParams::default());
    let e = p.init().unwrap_err().to_string();
    assert!(e.contains("[4097, 4097]") && e.contains("2^24"), "{e}");
}
