//! watershed and watershed_ift against scikit-image 0.26 and scipy 1.17 (tests/fixtures/make_segment.py): labels,
//! so every element must equal the reference's exactly (tolerance 0), in float32 and float64. Images are quantised
//! to a few levels, so plateaus and ties — where only the reference's own queue order gives its answer — are
//! everywhere; shapes 37×45 and 13×17×11; markers with a negative label; connectivity 1 to ndim, a footprint, an
//! offset, a mask, compactness, the watershed line, and markers from the local minima.

use crate::common::app;
use cliper::{
    Connectivity, Footprint, HostArray, IftParams, RealElement, Watershed, WatershedIft, WatershedParams, XData,
    read_npy,
};
use ndarray::ArrayD;
use num_complex::Complex64;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/segment/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::F64(a) => a,
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn upload<T: RealElement>(a: &ArrayD<f64>) -> XData<T> {
    XData::from_ndarray(app(), &a.mapv(|v| T::from_c64(Complex64::new(v, 0.0)))).unwrap()
}

fn footprint(name: &str) -> Footprint {
    let a = fixture(name);
    Footprint::new(a.shape(), a.iter().map(|&v| v != 0.0).collect()).unwrap()
}

fn differing<T: RealElement>(got: &XData<T>, want: &ArrayD<f64>) -> usize {
    let got = got.to_vec().unwrap();
    assert_eq!(got.len(), want.len());
    got.iter().zip(want.iter()).filter(|(g, w)| g.to_c64().re != **w).count()
}

/// (fixture, image, markers (None: the local minima), mask, params)
type Case = (&'static str, &'static str, Option<&'static str>, Option<&'static str>, WatershedParams);

fn watershed_cases() -> Vec<Case> {
    let p = WatershedParams::default;
    let steps = |n| Connectivity::Steps(n);
    vec![
        ("ws2_c1", "img2", Some("mk2"), None, p()),
        ("ws2_c2", "img2", Some("mk2"), None, p().connectivity(steps(2))),
        ("ws2_mask", "img2", Some("mk2"), Some("mask2"), p()),
        ("ws2_compact", "img2", Some("mk2"), None, p().compactness(0.01)),
        ("ws2_line", "img2", Some("mk2"), None, p().watershed_line(true)),
        ("ws2_line_c2_mask", "img2", Some("mk2"), Some("mask2"), p().connectivity(steps(2)).watershed_line(true)),
        ("ws2_compact_line", "img2", Some("mk2"), None, p().compactness(0.5).watershed_line(true)),
        ("ws2_minima", "img2", None, None, p()),
        ("ws2_minima_c2_mask", "img2", None, Some("mask2"), p().connectivity(steps(2))),
        (
            "ws2_footprint",
            "img2",
            Some("mk2"),
            None,
            p().connectivity(Connectivity::Footprint(footprint("wide_footprint"))),
        ),
        (
            "ws2_offset",
            "img2",
            Some("mk2"),
            None,
            p().connectivity(Connectivity::Footprint(Footprint::full(&[3, 3]).unwrap())).offset(&[1, 2]),
        ),
        ("ws3_c1", "img3", Some("mk3"), None, p()),
        ("ws3_c3", "img3", Some("mk3"), None, p().connectivity(steps(3))),
        ("ws3_mask_compact", "img3", Some("mk3"), Some("mask3"), p().compactness(0.01)),
        ("ws3_line", "img3", Some("mk3"), None, p().watershed_line(true)),
        ("ws3_minima", "img3", None, None, p()),
    ]
}

fn check_watershed<T: RealElement>() {
    for (name, image, markers, mask, params) in watershed_cases() {
        let want = fixture(name);
        let (image, markers, mask) = (
            upload::<T>(&fixture(image)),
            markers.map(|m| upload::<T>(&fixture(m))),
            mask.map(|m| upload::<T>(&fixture(m))),
        );
        let got = Watershed::apply(&image, markers.as_ref(), mask.as_ref(), params).unwrap();
        assert_eq!(differing(&got, &want), 0, "{name}: elements differ from skimage's");
    }
}

#[test]
fn watershed_matches_skimage_f32() {
    check_watershed::<f32>();
}

#[test]
fn watershed_matches_skimage_f64() {
    check_watershed::<f64>();
}

/// The cases are not trivial: the line leaves zeros, the plain flood none, and the options change the result.
#[test]
fn watershed_fixtures_differ_between_options() {
    let plain = fixture("ws2_c1");
    assert!(plain.iter().all(|&v| v != 0.0));
    assert!(fixture("ws2_line").iter().any(|&v| v == 0.0));
    for other in ["ws2_c2", "ws2_compact", "ws2_footprint", "ws2_offset"] {
        assert_ne!(fixture(other), plain, "{other} equals the plain watershed");
    }
}

fn check_ift<T: RealElement>() {
    let full2 = IftParams::default().structure(Footprint::full(&[3, 3]).unwrap());
    let full3 = IftParams::default().structure(Footprint::full(&[3, 3, 3]).unwrap());
    let cases = [
        ("ift2", "u8", "imk2", IftParams::default()),
        ("ift2_full", "u8", "imk2", full2),
        ("ift3", "u16", "imk3", IftParams::default()),
        ("ift3_full", "u16", "imk3", full3),
    ];
    for (name, image, markers, params) in cases {
        let want = fixture(name);
        let got = WatershedIft::apply(&upload::<T>(&fixture(image)), &upload::<T>(&fixture(markers)), params).unwrap();
        assert_eq!(differing(&got, &want), 0, "{name}: elements differ from scipy's");
    }
}

#[test]
fn watershed_ift_matches_scipy_f32() {
    check_ift::<f32>();
}

#[test]
fn watershed_ift_matches_scipy_f64() {
    check_ift::<f64>();
}

#[test]
fn refusals_name_what_is_wrong_in_one_line() {
    let image = upload::<f32>(&fixture("img2"));
    let other = XData::<f32>::zeros(app(), &[5, 5]).unwrap();
    let line = |e: cliper::Error| {
        let text = e.to_string();
        assert!(!text.contains('\n'), "{text}");
        text
    };
    let e = line(Watershed::apply(&image, Some(&other), None, WatershedParams::default()).unwrap_err());
    assert!(e.contains("[37, 45]") && e.contains("[5, 5]") && e.contains("markers"), "{e}");
    let even = WatershedParams::default().connectivity(Connectivity::Footprint(Footprint::full(&[3, 4]).unwrap()));
    let e = line(Watershed::apply(&image, Some(&image), None, even).unwrap_err());
    assert!(e.contains("[3, 4]"), "{e}");
    let halves = upload::<f32>(&fixture("img2").mapv(|v| v + 0.5));
    let e = line(Watershed::apply(&image, Some(&halves), None, WatershedParams::default()).unwrap_err());
    assert!(e.contains("0.5") && e.contains("markers"), "{e}");
    // scipy takes only 8- and 16-bit unsigned images.
    let e = line(WatershedIft::apply(&halves, &image, IftParams::default()).unwrap_err());
    assert!(e.contains("65535") && e.contains("0.5"), "{e}");
    let big = IftParams::default().structure(Footprint::full(&[5, 5]).unwrap());
    let e = line(WatershedIft::apply(&image, &image, big).unwrap_err());
    assert!(e.contains("[5, 5]") && e.contains("3"), "{e}");
}
