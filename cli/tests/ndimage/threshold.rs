//! `cliper threshold-value` against scikit-image 0.26 (tests/fixtures/make_threshold.py): every method on float32,
//! float64, uint8, uint16 and int16 .npy images of odd shapes, saved with -o and read back, must EQUAL skimage's
//! thresholds (each is a bin centre computed in the image's type as numpy does: a wrong bin is off by a whole
//! bin width). The integer images get skimage's integer rule from their file type alone; the printed form names
//! the values; an image with a NaN is refused in one line and nothing is written.

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/threshold").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Any file's values as float64 (the fixtures hold integer types `f32s` does not read).
fn values(path: &Path) -> ndarray::ArrayD<f64> {
    cliper::read_file(path).unwrap().to_elements::<f64>(path).unwrap()
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("tests/fixtures/threshold/thresholds.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn threshold_value_equals_scikit_image_from_the_file_type() {
    let dir = scratch("threshold-value");
    let out = dir.join("t.npy");
    let want = expected();
    let mut wrong = Vec::new();
    for name in ["f32_37x45", "f64_13x17x11", "u8_37x45", "u16_29x31", "i16_23x19", "f32_skewed_31x33"] {
        for (key, flags) in [
            ("otsu", &["--method", "otsu"][..]),
            ("yen", &["--method", "yen"]),
            ("triangle", &["--method", "triangle"]),
            ("multiotsu_3", &["--method", "multiotsu"]),
            ("multiotsu_4", &["--method", "multiotsu", "--classes", "4"]),
            ("otsu_nbins_64", &["--nbins", "64"]),
        ] {
            let input = fixture(name);
            let mut args = vec!["threshold-value", s(&input), "-o", s(&out)];
            args.extend_from_slice(flags);
            ok(&args);
            let got: Vec<f64> = f32s(&out).iter().copied().collect();
            let reference: Vec<f64> = want[name][key]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().parse::<f64>().unwrap())
                .collect();
            if got != reference {
                wrong.push(format!("{name} {key}: {got:?} vs skimage {reference:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Printed when no file is named.
    let printed = ok(&["threshold-value", s(&fixture("u8_37x45")), "--method", "multiotsu"]);
    assert!(printed.contains("[60, 126]"), "{printed}");
}

#[test]
fn threshold_value_of_an_image_with_a_nan_is_refused_in_one_line() {
    let dir = scratch("threshold-value-nan");
    let input = dir.join("nan.npy");
    let mut values = ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&[5, 7]), |i| (i[0] * 7 + i[1]) as f64);
    values[[2, 3]] = f64::NAN;
    cliper::write_npy(&input, &cliper::HostArray::F64(values)).unwrap();
    let out = dir.join("t.npy");
    let stderr = fails(&["threshold-value", s(&input), "-o", s(&out)], 1);
    assert!(stderr.contains("NaN") && stderr.trim().lines().count() == 1, "{stderr}");
    assert!(!out.exists());
}

/// `image > threshold(image)`: 1 where a value exceeds the threshold, else 0.
fn mask(values: &ndarray::ArrayD<f64>, threshold: f64) -> ndarray::ArrayD<f64> {
    values.mapv(|v| if v > threshold { 1.0 } else { 0.0 })
}

#[test]
fn threshold_by_method_equals_image_above_skimages_threshold_as_command_and_step() {
    let dir = scratch("threshold-method");
    let want = expected();
    let threshold = |name: &str, key: &str| -> f64 { want[name][key][0].as_str().unwrap().parse().unwrap() };
    for (name, method) in
        [("u8_37x45", "otsu"), ("f32_37x45", "yen"), ("f64_13x17x11", "triangle"), ("i16_23x19", "otsu")]
    {
        let input = fixture(name);
        let out = dir.join(format!("{name}-{method}.npy"));
        ok(&["threshold", s(&input), s(&out), "--method", method]);
        let expected_mask = mask(&values(&input), threshold(name, method));
        assert_eq!(f32s(&out), expected_mask, "{name} {method}");
    }
    // As a pipeline step, then used by the next step (the mask times the image).
    let pipeline = dir.join("p.toml");
    let out = dir.join("masked.npy");
    std::fs::write(
        &pipeline,
        format!(
            "[input]\nx = \"{}\"\n\n[[step]]\nop = \"threshold\"\nmethod = \"otsu\"\nin = \"x\"\nout = \"m\"\n\n\
             [[step]]\nop = \"expression\"\nexpr = \"a * b\"\nin = [\"m\", \"x\"]\nout = \"y\"\n\n[output]\ny = \"{}\"\n",
            s(&fixture("u8_37x45")),
            s(&out)
        ),
    )
    .unwrap();
    ok(&["run", s(&pipeline)]);
    let image = values(&fixture("u8_37x45"));
    assert_eq!(f32s(&out), &mask(&image, threshold("u8_37x45", "otsu")) * &image);
    // A value and a method together, or multiotsu, are refused before anything runs.
    let both = fails(&["threshold", s(&fixture("u8_37x45")), s(&out), "--method", "otsu", "--value", "3"], 1);
    assert!(both.contains("--value") || both.contains("--method"), "{both}");
    let multi = fails(&["threshold", s(&fixture("u8_37x45")), s(&dir.join("no.npy")), "--method", "multiotsu"], 1);
    assert!(multi.contains("multiotsu") && !dir.join("no.npy").exists(), "{multi}");
}

/// `threshold-value --method li` and `threshold --method li` on the fixtures, against skimage's threshold_li.
/// The value: within 16 ε · max|x| of skimage's, ε of the type the result is saved in (the library's test
/// explains the bound: numpy's pairwise sums against ours; integer images' float64 result saved as float32
/// rounds within it too). The mask: `image > skimage's threshold`, pixel for pixel. The image with NaN and
/// infinities is taken as skimage takes it (they are left out), where the other methods refuse it.
#[test]
fn li_threshold_and_mask_equal_scikit_image() {
    let dir = scratch("threshold-li");
    let want = expected();
    for name in [
        "f32_37x45",
        "f64_13x17x11",
        "u8_37x45",
        "u16_29x31",
        "i16_23x19",
        "f32_nan_inf_23x25",
        "f32_li_steps_19x21",
        "f32_li_interleaved_19x21",
    ] {
        let input = fixture(name);
        let out = dir.join(format!("{name}-t.npy"));
        ok(&["threshold-value", s(&input), "--method", "li", "-o", s(&out)]);
        let epsilon = match cliper::read_file(&out).unwrap() {
            cliper::HostArray::F32(_) => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        };
        let got = f32s(&out)[[0]];
        let reference: f64 = want[name]["li"][0].as_str().unwrap().parse().unwrap();
        let image = values(&input);
        let largest = image.iter().filter(|v| v.is_finite()).fold(0.0f64, |m, v| m.max(v.abs()));
        assert!((got - reference).abs() <= 16.0 * epsilon * largest, "{name}: {got} vs skimage {reference}");

        let masked = dir.join(format!("{name}-mask.npy"));
        ok(&["threshold", s(&input), s(&masked), "--method", "li"]);
        assert_eq!(f32s(&masked), mask(&image, reference), "{name}");
    }
    // Printed when no file is named.
    let printed = ok(&["threshold-value", s(&fixture("f32_li_steps_19x21")), "--method", "li"]);
    assert!(printed.contains("102.96578"), "{printed}");
}
