//! Automatic thresholds against scikit-image 0.26 (tests/fixtures/make_threshold.py): Otsu, Yen, triangle and
//! multi-Otsu (3 and 4 classes) of float32, float64, uint8, uint16 and int16 images of odd shapes (37×45,
//! 13×17×11, 29×31, 23×19, 31×33), 256 bins and 64. Every threshold is a bin centre, computed in the image's
//! type as numpy computes it, so each must EQUAL skimage's: a wrong bin is off by a whole bin width. Also the
//! refusals (a NaN, too few values for the classes) and Otsu's one-value image. Each image is counted with the
//! device's own histogram layout and with two forced ones a CPU would not choose: a GPU's (groups of 256 work-items
//! with local atomics into 32 interleaved copies) and a hybrid whose local histograms hold only 16 bins, the rest
//! counted by global atomics (what 16-bit images get on a GPU).

use crate::common::app;
use cliper::{
    HistogramBins, HistogramLayout, RealElement, ThresholdMethod, ThresholdParams, ThresholdValue, XData, read_npy,
};
use ndarray::ArrayD;
use num_complex::Complex64;

fn dir() -> String {
    format!("{}/tests/fixtures/threshold", env!("CARGO_MANIFEST_DIR"))
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(format!("{}/thresholds.json", dir())).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The image as float64 values and the bins scikit-image uses for its type.
fn image(name: &str) -> (ArrayD<f64>, Option<usize>) {
    let host = read_npy(format!("{}/{name}.npy", dir())).unwrap();
    let integers = match host.dtype() {
        cliper::Dtype::U8 | cliper::Dtype::I8 => Some(256),
        cliper::Dtype::U16 | cliper::Dtype::I16 => Some(65536),
        _ => None,
    };
    let values: ArrayD<f64> = host.to_elements::<f64>(name).unwrap();
    (values, integers)
}

fn thresholds<T: RealElement>(values: &ArrayD<f64>, params: ThresholdParams) -> cliper::Result<Vec<f64>> {
    let x = XData::<T>::from_ndarray(app(), &values.mapv(|v| T::from_c64(Complex64::new(v, 0.0)))).unwrap();
    let y = ThresholdValue::apply(&x, params)?;
    Ok(y.to_vec()?.iter().map(|v| v.to_c64().re).collect())
}

fn methods() -> [(&'static str, ThresholdMethod, Option<usize>); 6] {
    [
        ("otsu", ThresholdMethod::Otsu, None),
        ("yen", ThresholdMethod::Yen, None),
        ("triangle", ThresholdMethod::Triangle, None),
        ("multiotsu_3", ThresholdMethod::MultiOtsu { classes: 3 }, None),
        ("multiotsu_4", ThresholdMethod::MultiOtsu { classes: 4 }, None),
        ("otsu_nbins_64", ThresholdMethod::Otsu, Some(64)),
    ]
}

/// The device's layout and two forced ones (3 and 5 groups over images of 1000–2500 values: several blocks).
fn layouts() -> [Option<HistogramLayout>; 3] {
    [
        None,
        Some(HistogramLayout { groups: 3, work_items: 256, copies: 32, local_bins: 256 }),
        Some(HistogramLayout { groups: 5, work_items: 64, copies: 4, local_bins: 16 }),
    ]
}

#[test]
fn thresholds_equal_scikit_image() {
    let want = expected();
    let mut wrong = Vec::new();
    for name in ["f32_37x45", "f64_13x17x11", "u8_37x45", "u16_29x31", "i16_23x19", "f32_skewed_31x33"] {
        let (values, integers) = image(name);
        for ((key, method, nbins), layout) in methods().into_iter().flat_map(|m| layouts().map(|l| (m, l))) {
            let bins = match integers {
                Some(n) => HistogramBins::Integers(n),
                None => HistogramBins::Uniform(nbins.unwrap_or(256)),
            };
            let mut params = ThresholdParams::new(method).bins(bins);
            if let Some(layout) = layout {
                // a layout's local bins are at most the histogram's
                let nbins = match bins {
                    HistogramBins::Uniform(n) | HistogramBins::Integers(n) => n,
                };
                params = params.layout(HistogramLayout { local_bins: layout.local_bins.min(nbins), ..layout });
            }
            // A float32 image computes in float32 (its bins and centres are float32 in numpy); the others in
            // float64, which holds integers exactly.
            let got = if name.starts_with("f32") {
                thresholds::<f32>(&values, params)
            } else {
                thresholds::<f64>(&values, params)
            }
            .unwrap();
            let reference: Vec<f64> = want[name][key]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().parse::<f64>().unwrap())
                .collect();
            if got != reference {
                wrong.push(format!("{name} {key} {layout:?}: {got:?} vs skimage {reference:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn a_nan_or_too_few_values_is_refused_in_one_line_and_one_value_is_its_own_otsu_threshold() {
    let mut values = ArrayD::from_shape_fn(ndarray::IxDyn(&[7, 9]), |i| (i[0] * 9 + i[1]) as f64);
    values[[3, 4]] = f64::NAN;
    let e = thresholds::<f64>(&values, ThresholdParams::new(ThresholdMethod::Otsu)).unwrap_err().to_string();
    assert!(e.contains("NaN") && !e.contains('\n'), "{e}");

    let two = ArrayD::from_shape_fn(ndarray::IxDyn(&[5, 3]), |i| if i[0] < 2 { 1.0 } else { 4.0 });
    let e = thresholds::<f32>(&two, ThresholdParams::new(ThresholdMethod::MultiOtsu { classes: 3 }))
        .unwrap_err()
        .to_string();
    assert!(e.contains("only 2 different values") && e.contains("3 classes"), "{e}");

    let odd = HistogramLayout { groups: 2, work_items: 48, copies: 1, local_bins: 16 };
    let e = thresholds::<f32>(&two, ThresholdParams::new(ThresholdMethod::Otsu).layout(odd)).unwrap_err().to_string();
    assert!(e.contains("power of two") && !e.contains('\n'), "{e}");

    let flat = ArrayD::from_elem(ndarray::IxDyn(&[4, 6]), 2.5);
    assert_eq!(thresholds::<f32>(&flat, ThresholdParams::new(ThresholdMethod::Otsu)).unwrap(), vec![2.5]);
}

/// The images and skimage's threshold_li of each (tests/fixtures/make_threshold.py).
const LI_IMAGES: [&str; 9] = [
    "f32_37x45",
    "f64_13x17x11",
    "u8_37x45",
    "u16_29x31",
    "i16_23x19",
    "f32_skewed_31x33",
    "f32_nan_inf_23x25",
    "f32_li_steps_19x21",
    "f32_li_interleaved_19x21",
];

/// The machine epsilon of the image's arithmetic type (float32 for the f32 images, float64 for the others).
fn epsilon(name: &str) -> f64 {
    if name.starts_with("f32") { f64::from(f32::EPSILON) } else { f64::EPSILON }
}

/// Li's threshold, on every layout. A float image's iteration runs in its type as numpy's does, but numpy's sums
/// are pairwise in that type and ours accumulate in double (rounded to the type once), and the logarithms are the
/// platform's, not numpy's own; each moves a mean by a few ε of the values' magnitude. So the threshold may
/// differ from skimage's by at most 16 ε · max|x| (seen: 2 float32 ulps on f32_37x45, 16 to 48 float64 ulps of
/// −6.26 on f64_13x17x11, where the result is a difference of values near 70; the others exact), while a wrong
/// step or a wrong stop moves it by a gap between values, thousands of times more. The split of the image,
/// `image > threshold`, must be the same pixel for pixel. Integer images go through the histogram path, whose
/// sums are exact in float64. The two `li_steps` images stop, as skimage does, on a change under the default
/// tolerance but not zero (one more step would move the threshold by 0.29): the exact tolerance is needed.
#[test]
fn li_equals_scikit_image_and_splits_the_image_as_it_does() {
    let want = expected();
    let mut wrong = Vec::new();
    for name in LI_IMAGES {
        let (values, integers) = image(name);
        for layout in layouts() {
            let bins = integers.map_or(HistogramBins::Uniform(256), HistogramBins::Integers);
            let mut params = ThresholdParams::new(ThresholdMethod::Li).bins(bins);
            if let Some(layout) = layout {
                params = params.layout(layout);
            }
            let got = if name.starts_with("f32") {
                thresholds::<f32>(&values, params)
            } else {
                thresholds::<f64>(&values, params)
            }
            .unwrap();
            let reference: f64 = want[name]["li"][0].as_str().unwrap().parse().unwrap();
            let largest = values.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
            let tolerance = 16.0 * epsilon(name) * largest;
            let split_differs = values.iter().filter(|&&v| (v > got[0]) != (v > reference)).count();
            if (got[0] - reference).abs() > tolerance || split_differs > 0 {
                wrong.push(format!(
                    "{name} {layout:?}: {got:?} vs skimage {reference} (tolerance {tolerance:e}, {split_differs} pixels)"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// skimage's answers before any iteration, exactly: NaN for an image of NaN alone, the value of an image of one
/// value (NaN aside, infinities included), 0 for infinities of both signs and nothing finite.
#[test]
fn li_answers_scikit_images_special_cases() {
    let want = expected();
    for case in want["li_cases"].as_array().unwrap() {
        let parse = |v: &serde_json::Value| v.as_str().unwrap().parse::<f64>().unwrap();
        let values: Vec<f64> = case["values"].as_array().unwrap().iter().map(parse).collect();
        let reference = parse(&case["li"][0]);
        let image = ArrayD::from_shape_vec(ndarray::IxDyn(&[values.len()]), values.clone()).unwrap();
        let params = ThresholdParams::new(ThresholdMethod::Li);
        let got = match case["dtype"].as_str().unwrap() {
            "float32" => thresholds::<f32>(&image, params),
            "uint8" => thresholds::<f64>(&image, params.bins(HistogramBins::Integers(256))),
            _ => thresholds::<f64>(&image, params),
        }
        .unwrap();
        assert!(got[0] == reference || (got[0].is_nan() && reference.is_nan()), "{values:?}: {got:?} vs {reference}");
    }
}

/// ThresholdMask on every layout (its pass shares the image as the search's do): `image > skimage's threshold`,
/// pixel for pixel, for Otsu on a float32 and a uint8 image and Li on the image with NaN and infinities.
#[test]
fn masks_equal_image_above_skimages_threshold_on_every_layout() {
    let want = expected();
    for (name, key, method) in [
        ("f32_37x45", "otsu", ThresholdMethod::Otsu),
        ("u8_37x45", "otsu", ThresholdMethod::Otsu),
        ("f32_nan_inf_23x25", "li", ThresholdMethod::Li),
    ] {
        let (values, integers) = image(name);
        let reference: f64 = want[name][key][0].as_str().unwrap().parse().unwrap();
        let expected_mask = values.mapv(|v| if v > reference { 1.0 } else { 0.0 });
        for layout in layouts() {
            let bins = integers.map_or(HistogramBins::Uniform(256), HistogramBins::Integers);
            let mut params = ThresholdParams::new(method).bins(bins);
            if let Some(layout) = layout {
                params = params.layout(layout);
            }
            let x = XData::<f32>::from_ndarray(app(), &values.mapv(|v| v as f32)).unwrap();
            let mask = cliper::ThresholdMask::apply(&x, params, (1.0, 0.0)).unwrap().to_ndarray().unwrap();
            assert_eq!(mask.mapv(f64::from), expected_mask, "{name} {key} {layout:?}");
        }
    }
}
