//! `cliper peak-local-max` and `peak-mask` against scikit-image 0.26 (tests/fixtures/make_feature.py): the binary on
//! the fixture's .npy images (37×45, 13×17×11), labels and footprints, the table saved as CSV, printed, and as a
//! pipeline step's output, and the peak mask (uint8, the image's shape). Coordinates are integers in skimage's
//! order: compared exactly. Refusals: one line, nothing written.

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/feature").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// skimage's coordinates of the fixture's float64 case `name`.
fn expected(name: &str) -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(root().join("tests/fixtures/feature/cases.json")).unwrap();
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let case = cases.as_array().unwrap().iter().find(|c| c["name"] == name && c["dtype"] == "float64").unwrap();
    let rows = case["coords"].as_array().unwrap();
    rows.iter().map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect()).collect()
}

#[test]
fn peak_local_max_writes_skimages_coordinates() {
    let dir = scratch("peaks-csv");
    let cross = fixture("cross");
    let cases: [(&str, &str, Option<&str>, Vec<&str>); 5] = [
        ("md3", "i2", None, vec!["--min-distance", "3"]),
        ("md1_border_axes", "i2", None, vec!["--exclude-border", "0,4"]),
        ("cross", "i2", None, vec!["--min-distance", "2", "--exclude-border", "false", "--footprint", s(&cross)]),
        (
            "labels_per1",
            "i2",
            Some("labels2"),
            vec!["--min-distance", "2", "--num-peaks-per-label", "1", "--exclude-border", "false"],
        ),
        ("i3_md2", "i3", None, vec!["--min-distance", "2", "--exclude-border", "false"]),
    ];
    for (name, image, labels, flags) in cases {
        let out = dir.join(format!("{name}.csv"));
        let (image, labels) = (fixture(image), labels.map(fixture));
        let mut args = vec!["peak-local-max", s(&image)];
        args.extend(labels.as_deref().map(s));
        args.extend(flags);
        args.extend(["-o", s(&out)]);
        ok(&args);
        let (header, rows) = csv(&out);
        let want = expected(name);
        assert_eq!(header, (0..want[0].len()).map(|k| format!("axis-{k}")).collect::<Vec<_>>(), "{name}");
        assert_eq!(rows, want, "{name}: skimage's peaks in skimage's order");
    }
}

#[test]
fn peak_local_max_prints_its_table_and_runs_as_a_step() {
    let dir = scratch("peaks-forms");
    let image = fixture("i2");
    let printed =
        ok(&["peak-local-max", s(&image), "--min-distance", "3", "--num-peaks", "5", "--exclude-border", "false"]);
    let rows: Vec<Vec<f64>> = printed
        .lines()
        .filter_map(|l| l.split_whitespace().map(|v| v.parse::<f64>().ok()).collect::<Option<Vec<f64>>>())
        .filter(|r| r.len() == 2)
        .collect();
    assert!(printed.contains("axis-0") && printed.contains("axis-1"), "{printed}");
    assert_eq!(rows, expected("md3_num5"), "{printed}");

    let out = dir.join("peaks.csv");
    let pipeline = dir.join("p.toml");
    let text = format!(
        "input = {{ image = '{}' }}\n[[step]]\nin = 'image'\nop = 'peak-local-max'\nmin_distance = 4\np_norm = 2\nexclude_border = false\nout = 'peaks'\n[output]\npeaks = '{}'\n",
        s(&image),
        s(&out)
    );
    std::fs::write(&pipeline, text).unwrap();
    ok(&["run", s(&pipeline)]);
    assert_eq!(csv(&out).1, expected("md4_p2"));
}

#[test]
fn peak_mask_marks_skimages_peaks() {
    let dir = scratch("peaks-mask");
    for (name, image, labels, flags) in [
        ("md3_abs", "i2", None, vec!["--min-distance", "3", "--threshold-abs", "3", "--exclude-border", "false"]),
        ("labels", "i2", Some("labels2"), vec!["--min-distance", "2"]),
    ] {
        let out = dir.join(format!("{name}.npy"));
        let labels = labels.map(fixture);
        let mut args = vec!["peak-mask".to_string(), s(&fixture(image)).to_string(), s(&out).to_string()];
        args.extend(flags.into_iter().map(str::to_string));
        if let Some(l) = &labels {
            args.extend(["--labels".to_string(), s(l).to_string()]);
        }
        ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let mask = cliper::read_file(&out).unwrap();
        assert_eq!(mask.dtype(), cliper::Dtype::U8, "{name}: a mask is uint8");
        let mask = f32s(&out);
        assert_eq!(mask.shape(), [37, 45]);
        let mut want = ndarray::ArrayD::<f64>::zeros(ndarray::IxDyn(&[37, 45]));
        for c in expected(name) {
            want[[c[0] as usize, c[1] as usize]] = 1.0;
        }
        assert_eq!(mask, want, "{name}: mask[tuple(coords.T)] = True");
    }
}

#[test]
fn peak_refusals_are_one_line_and_write_nothing() {
    let dir = scratch("peaks-refusals");
    let out = dir.join("t.csv");
    let stderr = fails(&["peak-local-max", s(&fixture("i2")), "--p-norm", "0.5", "-o", s(&out)], 1);
    assert!(stderr.contains("p_norm") && stderr.trim().lines().count() == 1, "{stderr}");
    let stderr = fails(&["peak-local-max", s(&fixture("i2")), "--exclude-border", "1,2,3", "-o", s(&out)], 1);
    assert!(stderr.contains("exclude_border") && stderr.trim().lines().count() == 1, "{stderr}");
    let mask = dir.join("m.npy");
    let stderr = fails(&["peak-mask", s(&fixture("i2")), s(&mask), "--labels", s(&fixture("labels3"))], 1);
    assert!(stderr.contains("[37, 45]") && stderr.trim().lines().count() == 1, "{stderr}");
    assert!(!out.exists() && !mask.exists());
}

#[test]
fn peak_mask_refuses_labels_single_precision_would_merge() {
    // A float32 image runs in single precision; labels 2^24 and 2^24 + 1 (int32) would both round to 2^24 there
    // and be searched as one label (one peak where skimage finds two with num_peaks_per_label=1): refused.
    let dir = scratch("peaks-big-labels");
    let (image, labels, out) = (dir.join("x.npy"), dir.join("l.npy"), dir.join("m.npy"));
    let x: Vec<f32> = (0..40).map(|k| [0.0, 3.0, 1.0, 2.0][k % 4]).collect();
    cliper::write_npy(
        &image,
        &cliper::HostArray::F32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[4, 10]), x).unwrap()),
    )
    .unwrap();
    let l: Vec<i32> = (0..40).map(|k| if k % 10 < 5 { 1 << 24 } else { (1 << 24) + 1 }).collect();
    cliper::write_npy(
        &labels,
        &cliper::HostArray::I32(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[4, 10]), l).unwrap()),
    )
    .unwrap();
    let args = [
        "peak-mask",
        s(&image),
        s(&out),
        "--labels",
        s(&labels),
        "--num-peaks-per-label",
        "1",
        "--exclude-border",
        "false",
    ];
    let stderr = fails(&args, 1);
    assert!(stderr.contains("16777217") && stderr.trim().lines().count() == 1, "{stderr}");
    assert!(!out.exists());
    // In double precision both labels stay apart: one peak each.
    let double: Vec<&str> = args.iter().copied().chain(["--precision", "double"]).collect();
    ok(&double);
    assert_eq!(f32s(&out).iter().filter(|&&v| v == 1.0).count(), 2);
}
