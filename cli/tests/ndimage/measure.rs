//! `cliper measure` against scipy.ndimage (tests/fixtures/make_measure.py): the binary on .npy label images and
//! images of 37×45 and 13×17×11 with gaps in the label numbering, tables saved as CSV, JSON and .npy, printed, and
//! as a pipeline step's output; every label present (the absent one skipped) or `--index`'s, in its order.
//! Tolerance: 1e-12 relative for sums and what derives from them (scipy adds in another order), exact for
//! counts, extrema, positions and boxes. Refusals: fractional labels, an unknown statistic, another extension.

use crate::common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/measure").join(format!("{name}.npy"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("tests/fixtures/measure/measurements.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A fixture value: floats are stored as their exact text (`nan` for NaN).
fn num(v: &serde_json::Value) -> f64 {
    v.as_str().map_or_else(|| v.as_f64().unwrap(), |t| t.parse().unwrap())
}

fn agrees(column: &str, got: f64, want: f64) -> bool {
    let inexact = ["sum", "mean", "variance", "standard_deviation", "center_of_mass"];
    if want.is_nan() {
        got.is_nan()
    } else if inexact.iter().any(|c| column.starts_with(c)) {
        (got - want).abs() <= 1e-12 * want.abs().max(1.0)
    } else {
        got == want
    }
}

const STATS: &str = "count,sum,mean,variance,standard_deviation,extrema,center_of_mass,bbox";

#[test]
fn measure_writes_scipys_measurements_of_every_label_present() {
    let dir = scratch("measure-csv");
    let want = expected();
    for case in ["2d", "3d"] {
        let out = dir.join(format!("{case}.csv"));
        let (labels, image) = (fixture(&format!("labels_{case}")), fixture(&format!("image_{case}")));
        ok(&["measure", s(&labels), s(&image), "--stats", STATS, "-o", s(&out)]);
        let (header, rows) = csv(&out);
        assert_eq!(header[..4], ["label", "count", "sum", "mean"]);
        let reference: Vec<&serde_json::Value> =
            want[case]["f64"].as_array().unwrap().iter().filter(|r| num(&r["count"]) != 0.0).collect();
        assert_eq!(rows.len(), reference.len(), "{case}: one row per label present");
        for (row, reference) in rows.iter().zip(reference) {
            for (column, &got) in header.iter().zip(row) {
                assert!(agrees(column, got, num(&reference[column])), "{case} {column}: {got} vs {reference}");
            }
        }
    }
}

#[test]
fn measure_index_json_npy_and_printed_tables() {
    let dir = scratch("measure-forms");
    let want = expected();
    let (labels, image) = (fixture("labels_2d"), fixture("image_2d"));
    // --index in its order, with the absent label 4: scipy's count 0 and NaN mean.
    let json = dir.join("t.json");
    ok(&["measure", s(&labels), s(&image), "--stats", "count,mean", "--index", "5,4,1", "-o", s(&json)]);
    let table: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(table["label"], serde_json::json!([5, 4, 1]));
    assert_eq!(table["count"][1], serde_json::json!(0));
    assert!(table["mean"][1].is_null());
    let mean5 = num(&want["2d"]["f64"][4]["mean"]);
    assert!((table["mean"][0].as_f64().unwrap() - mean5).abs() <= 1e-12 * mean5.abs());
    // .npy: the table as a float64 array.
    let npy = dir.join("t.npy");
    ok(&["measure", s(&labels), "--stats", "count", "-o", s(&npy)]);
    let array = cliper::read_file(&npy).unwrap().to_elements::<f64>(&npy).unwrap();
    assert_eq!(array.shape(), &[11, 2]);
    // Printed: a header and a row per label.
    let printed = ok(&["measure", s(&labels), "--stats", "count,center_of_mass", "--index", "1,2"]);
    let header: Vec<&str> = printed.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(header, ["label", "count", "center_of_mass-0", "center_of_mass-1"], "{printed}");
    assert_eq!(printed.lines().count(), 4, "{printed}");
}

#[test]
fn measure_as_a_pipeline_step_writes_its_table() {
    let dir = scratch("measure-pipeline");
    let out = dir.join("regions.csv");
    let pipeline = dir.join("p.toml");
    let text = format!(
        "input = {{ labels = '{}', image = '{}' }}\n[[step]]\nop = 'measure'\nstats = ['count', 'maximum_position']\nin = ['labels', 'image']\nout = 'regions'\n[output]\nregions = '{}'\n",
        s(&fixture("labels_3d")),
        s(&fixture("image_3d")),
        s(&out)
    );
    std::fs::write(&pipeline, text).unwrap();
    ok(&["run", s(&pipeline)]);
    let (header, rows) = csv(&out);
    assert_eq!(header, ["label", "count", "maximum_position-0", "maximum_position-1", "maximum_position-2"]);
    let want = expected();
    let first = &want["3d"]["f64"][0];
    assert_eq!(rows[0][2..], [0, 1, 2].map(|k| num(&first[format!("maximum_position-{k}")])));
}

#[test]
fn measure_refusals_are_one_line_and_write_nothing() {
    let dir = scratch("measure-refusals");
    let fractional = dir.join("fractional.npy");
    let values = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[2, 3]), vec![0.0, 1.0, 2.5, 1.0, 0.0, 2.0]).unwrap();
    cliper::write_npy(&fractional, &cliper::HostArray::F64(values)).unwrap();
    let out = dir.join("t.csv");
    let stderr = fails(&["measure", s(&fractional), "-o", s(&out)], 1);
    assert!(stderr.contains("2.5") && stderr.trim().lines().count() == 1, "{stderr}");
    assert!(!out.exists());
    let stderr = fails(&["measure", s(&fixture("labels_2d")), "--stats", "mean,mode", "-o", s(&out)], 1);
    assert!(stderr.contains("`mode`"), "{stderr}");
    let tif = dir.join("t.txt");
    let stderr = fails(&["measure", s(&fixture("labels_2d")), "-o", s(&tif)], 1);
    assert!(stderr.contains("t.txt"), "{stderr}");
    assert!(!tif.exists() && !out.exists());
}

#[test]
fn regionprops_writes_scikit_images_table() {
    let dir = scratch("regionprops");
    let text = std::fs::read_to_string(root().join("tests/fixtures/measure/regionprops.json")).unwrap();
    let want: serde_json::Value = serde_json::from_str(&text).unwrap();
    let out = dir.join("r.csv");
    let properties = "label,area,bbox,centroid,intensity_mean,inertia_tensor_eigvals,eccentricity,orientation,extent";
    let (labels, image) = (fixture("labels_2d"), fixture("image_2d"));
    ok(&["regionprops", s(&labels), s(&image), "--properties", properties, "-o", s(&out)]);
    let (header, rows) = csv(&out);
    assert_eq!(header[..4], ["label", "area", "bbox-0", "bbox-1"]);
    for (k, column) in header.iter().enumerate() {
        let expected = want["2d"]["columns"][column].as_array().unwrap_or_else(|| panic!("{column}"));
        assert_eq!(rows.len(), expected.len());
        for (row, e) in rows.iter().zip(expected) {
            let (g, e) = (row[k], num(e));
            assert!((g - e).abs() <= 1e-9 * e.abs().max(1.0), "{column}: {g} vs skimage {e}");
        }
    }
    let stderr = fails(&["regionprops", s(&labels), "--properties", "intensity_mean", "-o", s(&out)], 1);
    assert!(stderr.contains("intensity_mean needs an IMAGE"), "{stderr}");
    let stderr = fails(&["regionprops", s(&labels), "--properties", "perimeter"], 1);
    assert!(stderr.contains("`perimeter`"), "{stderr}");
}

/// `regionprops --properties label,area_convex,solidity` (and `feret_diameter_max`) against scikit-image 0.26 (tests/fixtures/
/// make_regionprops.py's hull.json) on its awkward 2-D and 3-D shapes, exact (counts, and one division of the
/// same integers: `inf` in the CSV where the 3-D hull of a flat region is empty, as skimage's).
#[test]
fn regionprops_convex_hull_properties_equal_scikit_image() {
    let dir = scratch("regionprops-hull");
    let text = std::fs::read_to_string(root().join("tests/fixtures/measure/hull.json")).unwrap();
    let want: serde_json::Value = serde_json::from_str(&text).unwrap();
    for case in ["2d", "3d"] {
        let out = dir.join(format!("hull_{case}.csv"));
        ok(&[
            "regionprops",
            s(&fixture(&format!("hull_{case}"))),
            "--properties",
            "label,area_convex,solidity",
            "-o",
            s(&out),
        ]);
        let (header, rows) = csv(&out);
        assert_eq!(header, ["label", "area_convex", "solidity"]);
        for (k, column) in header.iter().enumerate() {
            let expected: Vec<f64> = want[case][column].as_array().unwrap().iter().map(num).collect();
            let got: Vec<f64> = rows.iter().map(|row| row[k]).collect();
            assert_eq!(got, expected, "{case} {column}");
        }
    }
    // feret_diameter_max: every 2-D label (exact); a 3-D label image with flat regions is refused in one line,
    // as skimage's marching_cubes raises on them, and nothing is written.
    let out = dir.join("feret.csv");
    ok(&["regionprops", s(&fixture("hull_2d")), "--properties", "label,feret_diameter_max", "-o", s(&out)]);
    let (_, rows) = csv(&out);
    let expected: Vec<f64> = want["2d"]["feret_diameter_max"].as_array().unwrap().iter().map(num).collect();
    assert_eq!(rows.iter().map(|row| row[1]).collect::<Vec<_>>(), expected);
    let out = dir.join("feret_3d.csv");
    let stderr =
        fails(&["regionprops", s(&fixture("hull_3d")), "--properties", "feret_diameter_max", "-o", s(&out)], 1);
    assert!(stderr.contains("feret_diameter_max of label 1") && stderr.trim().lines().count() == 1, "{stderr}");
    assert!(!out.exists());
    let line = dir.join("line.npy");
    let values = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[3]), vec![1.0, 1.0, 0.0]).unwrap();
    cliper::write_npy(&line, &cliper::HostArray::F64(values)).unwrap();
    let out = dir.join("line.csv");
    let stderr = fails(&["regionprops", s(&line), "--properties", "area_convex", "-o", s(&out)], 1);
    assert!(stderr.contains("area_convex") && stderr.contains("[3]") && stderr.trim().lines().count() == 1, "{stderr}");
    assert!(!out.exists());
}
