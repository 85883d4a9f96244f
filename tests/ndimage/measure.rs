//! Per-label measurements against scipy.ndimage (tests/fixtures/make_measure.py): sum_labels, mean, variance,
//! standard_deviation, minimum, maximum, their positions, center_of_mass and find_objects' boxes, on a 37×45 and a
//! 13×17×11 label image with gaps in the numbering (an absent label each), of float64 and float32 images, and
//! without an image (counts, centroids, boxes). Tolerances: counts, extrema, positions and boxes are exact; sums
//! and the values derived from them agree to 1e-12 relative in float64 (scipy adds in another order: bincount's
//! sequential sum, ours per run then atomically) and likewise for float32 inputs, whose values both accumulate in
//! float64. An absent label must give scipy's values for it (0, or NaN).

use crate::common::app;
use cliper::{LabelRows, Measure, MeasureParams, MeasureStat, RealElement, XData, read_npy};
use ndarray::ArrayD;
use num_complex::Complex64;

fn dir() -> String {
    format!("{}/tests/fixtures/measure", env!("CARGO_MANIFEST_DIR"))
}

fn expected() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(format!("{}/measurements.json", dir())).unwrap()).unwrap()
}

fn npy(name: &str) -> ArrayD<f64> {
    read_npy(format!("{}/{name}.npy", dir())).unwrap().to_elements::<f64>(name).unwrap()
}

fn device<T: RealElement>(values: &ArrayD<f64>) -> XData<T> {
    XData::from_ndarray(app(), &values.mapv(|v| T::from_c64(Complex64::new(v, 0.0)))).unwrap()
}

/// scipy.ndimage's statistics (its median is the Python package's, on the host), and the count.
fn all_stats() -> Vec<MeasureStat> {
    use MeasureStat::*;
    vec![
        Count,
        Sum,
        Mean,
        Variance,
        StandardDeviation,
        Minimum,
        Maximum,
        MinimumPosition,
        MaximumPosition,
        CenterOfMass,
        Bbox,
    ]
}

/// A fixture value: floats are stored as their exact text (`nan` for NaN).
fn num(v: &serde_json::Value) -> f64 {
    v.as_str().map_or_else(|| v.as_f64().unwrap(), |t| t.parse().unwrap())
}

fn close(got: f64, want: f64, exact: bool) -> bool {
    if want.is_nan() {
        got.is_nan()
    } else if exact {
        got == want
    } else {
        (got - want).abs() <= 1e-12 * want.abs().max(1.0)
    }
}

fn compare<T: RealElement>(case: &str, types: &str, image: Option<&str>) {
    let want = expected();
    let labels_values = npy(&format!("labels_{case}"));
    let labels = device::<T>(&labels_values);
    let image = image.map(|name| device::<T>(&npy(name)));
    let index: Vec<f64> = want[case]["index"].as_array().unwrap().iter().map(num).collect();
    // The device's own chunks, then 7 elements per work-item: runs split where chunks meet, as on a GPU's 256.
    for chunk in [None, Some(7)] {
        let mut params = MeasureParams::new(&all_stats(), LabelRows::Labels(index.clone()));
        params.chunk = chunk;
        compare_table(case, types, &want, &labels, image.as_ref(), params);
    }
}

fn compare_table<T: RealElement>(
    case: &str,
    types: &str,
    want: &serde_json::Value,
    labels: &XData<T>,
    image: Option<&XData<T>>,
    params: MeasureParams,
) {
    let index = match &params.rows {
        LabelRows::Labels(index) => index.clone(),
        LabelRows::Positive => vec![1.0],
    };
    let columns = params.columns(labels.shape().len());
    let chunk = params.chunk;
    let table = Measure::apply(image, labels, params).unwrap();
    assert_eq!(table.shape(), &[index.len(), columns.len()]);
    let values = table.to_vec().unwrap();
    let mut wrong = Vec::new();
    for (row, reference) in values.chunks(columns.len()).zip(want[case][types].as_array().unwrap()) {
        for (column, &got) in columns.iter().zip(row) {
            let exact = !["sum", "mean", "variance", "standard_deviation", "center_of_mass"]
                .iter()
                .any(|inexact| column.starts_with(inexact));
            let want = if image.is_none() {
                // Without an image every value is 1: counts, unweighted centroids, boxes.
                match column.as_str() {
                    "label" | "count" => num(&reference[column]),
                    c if c.starts_with("bbox") => num(&reference[c]),
                    _ => continue,
                }
            } else {
                num(&reference[column])
            };
            if !close(got, want, exact) {
                wrong.push(format!("label {} {column}: {got} vs scipy {want}", row[0]));
            }
        }
    }
    assert!(wrong.is_empty(), "{case} {types} chunk {chunk:?}: {} values differ:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn measurements_of_a_float64_image_equal_scipy() {
    compare::<f64>("2d", "f64", Some("image_2d"));
    compare::<f64>("3d", "f64", Some("image_3d"));
}

#[test]
fn measurements_of_a_float32_image_equal_scipy() {
    compare::<f32>("2d", "f32", Some("image_2d_f32"));
    compare::<f32>("3d", "f32", Some("image_3d_f32"));
}

#[test]
fn the_labels_alone_give_counts_and_boxes() {
    compare::<f32>("2d", "f64", None);
    compare::<f64>("3d", "f64", None);
}

#[test]
fn the_labels_present_are_found_in_order() {
    let want = expected();
    let labels = device::<f32>(&npy("labels_2d"));
    let index: Vec<f64> = want["2d"]["index"].as_array().unwrap().iter().map(num).collect();
    let present: Vec<f64> = index.into_iter().filter(|&l| l != 4.0).collect(); // label 4 has no element
    assert_eq!(Measure::present_labels(&labels).unwrap(), present);
}

/// scipy repeats a label's values for each time `index` names it; the kernels accumulate it in its first row only,
/// so the table reads that row for the later ones (they came out as an absent label's, with exit 0, before).
#[test]
fn a_label_listed_twice_gets_its_values_twice() {
    let labels = device::<f64>(&npy("labels_2d"));
    let image = device::<f64>(&npy("image_2d"));
    let stats = [MeasureStat::Count, MeasureStat::Mean, MeasureStat::Bbox, MeasureStat::AreaConvex];
    let table =
        Measure::apply(Some(&image), &labels, MeasureParams::new(&stats, LabelRows::Labels(vec![2.0, 3.0, 2.0])))
            .unwrap()
            .to_vec()
            .unwrap();
    let width = table.len() / 3;
    assert!(table[1] > 0.0, "{table:?}");
    assert_eq!(table[..width], table[2 * width..], "{table:?}");
}

#[test]
fn every_label_above_zero_as_one_region_is_scipys_index_none() {
    let want = expected();
    let labels = device::<f64>(&npy("labels_2d"));
    let image = device::<f64>(&npy("image_2d"));
    let params = MeasureParams::new(&[MeasureStat::Sum, MeasureStat::Mean], LabelRows::Positive);
    let row = Measure::apply(Some(&image), &labels, params).unwrap().to_vec().unwrap();
    assert!(row[0].is_nan(), "the region of every positive label has no label value: {row:?}");
    assert!(close(row[1], num(&want["2d"]["positive_sum"]), false), "{row:?}");
    assert!(close(row[2], num(&want["2d"]["positive_mean"]), false), "{row:?}");
}

#[test]
fn nan_values_are_ignored_by_the_minimum_and_kept_by_the_maximum() {
    // scipy: minimum sorts NaN last (ignored unless every value is NaN); maximum, sum and mean give NaN.
    let labels = XData::from_slice(app(), &[6], &[1.0f64, 1.0, 1.0, 2.0, 2.0, 0.0]).unwrap();
    let image = XData::from_slice(app(), &[6], &[3.0f64, f64::NAN, 1.0, f64::NAN, f64::NAN, 7.0]).unwrap();
    let stats = [MeasureStat::Minimum, MeasureStat::Maximum, MeasureStat::Sum];
    let params = MeasureParams::new(&stats, LabelRows::Labels(vec![1.0, 2.0]));
    let t = Measure::apply(Some(&image), &labels, params).unwrap().to_vec().unwrap();
    assert_eq!(t[1], 1.0);
    assert!(t[2].is_nan() && t[3].is_nan());
    assert!(t[5].is_nan() && t[6].is_nan() && t[7].is_nan(), "{t:?}");
}

#[test]
fn refusals_name_what_is_wrong() {
    let labels = XData::from_slice(app(), &[2, 2], &[1.0f32, 2.0, -1.0, 0.5]).unwrap();
    let err = Measure::present_labels(&labels).unwrap_err().to_string();
    assert!(err.contains("2 label(s)") && err.contains("-1") && err.contains("flat index 2"), "{err}");
    let image = XData::<f32>::zeros(app(), &[2, 3]).unwrap();
    let params = MeasureParams::new(&[MeasureStat::Mean], LabelRows::Labels(vec![1.0]));
    let err = Measure::apply(Some(&image), &labels, params.clone()).unwrap_err().to_string();
    assert!(err.contains("[2, 2]") && err.contains("[2, 3]"), "{err}");
    let fractional = MeasureParams::new(&[MeasureStat::Mean], LabelRows::Labels(vec![1.5]));
    let err = Measure::apply(None, &labels, fractional).unwrap_err().to_string();
    assert!(err.contains("1.5"), "{err}");
    let four = XData::<f32>::zeros(app(), &[2, 2, 2, 2]).unwrap();
    assert!(Measure::apply(None, &four, params).unwrap_err().to_string().contains("[2, 2, 2, 2]"));
    assert!(MeasureStat::parse_list("mean,mode").unwrap_err().to_string().contains("`mode`"));
}

/// regionprops_table against scikit-image 0.26 (tests/fixtures/make_regionprops.py) on the same label images and
/// float64 images: every property cliper computes, by skimage's column names. Tolerances: label, area, num_pixels,
/// bbox and the intensity extrema exact; sums 1e-12 relative (other addition order); the inertia tensor's
/// eigenvalues, eccentricity and orientation 1e-9 (closed forms against LAPACK's eigvalsh); the moments (raw,
/// central, normalized, Hu; unweighted and weighted) 1e-11 of their column's largest magnitude or 1 (central moments
/// are expanded from the raw ones about the box corner, skimage sums them about the centroid directly); NaN where
/// skimage has NaN (normalized moments of order below 2); area_convex and solidity exact (integer counts, and one
/// division of the same two integers: bit-equal, infinity where the 3-D hull is empty).
#[test]
fn regionprops_properties_equal_scikit_image() {
    let path = format!("{}/regionprops.json", dir());
    let want: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for case in ["2d", "3d"] {
        let labels = device::<f64>(&npy(&format!("labels_{case}")));
        let image = device::<f64>(&npy(&format!("image_{case}")));
        let properties: Vec<(&str, MeasureStat)> = want[case]["properties"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| MeasureStat::REGIONPROPS.iter().find(|(name, _)| Some(*name) == p.as_str()).copied())
            .collect();
        let stats: Vec<MeasureStat> = properties.iter().map(|(_, s)| *s).collect();
        let rows = Measure::present_labels(&labels).unwrap();
        // The CPU's chunks, then 7 elements per work-item (runs split where chunks meet, as on a GPU's 256).
        for chunk in [None, Some(7)] {
            let mut params = MeasureParams::new(&stats, LabelRows::Labels(rows.clone()));
            params.chunk = chunk;
            regionprops_table_equals(case, &want, &labels, &image, &properties, params);
        }
    }
}

fn regionprops_table_equals(
    case: &str,
    want: &serde_json::Value,
    labels: &XData<f64>,
    image: &XData<f64>,
    properties: &[(&str, MeasureStat)],
    params: MeasureParams,
) {
    let ndim = labels.shape().len();
    let chunk = params.chunk;
    let table = Measure::apply(Some(image), labels, params).unwrap();
    let names: Vec<String> = std::iter::once("label".to_string())
        .chain(
            properties
                .iter()
                .flat_map(|(name, stat)| stat.columns(ndim).into_iter().map(move |c| c.replacen(stat.name(), name, 1))),
        )
        .collect();
    let values = table.to_vec().unwrap();
    let reference = &want[case]["columns"];
    let mut wrong = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let expected: Vec<f64> =
            reference[name].as_array().unwrap_or_else(|| panic!("{name}")).iter().map(num).collect();
        let got: Vec<f64> = values.chunks(names.len()).map(|row| row[k]).collect();
        assert_eq!(got.len(), expected.len(), "{case} {name}: rows");
        let exact = ["label", "area", "num_pixels", "bbox", "intensity_min", "intensity_max", "solidity"];
        let loose = ["inertia_tensor_eigvals", "eccentricity", "orientation"];
        // The largest magnitude of a moment column: central moments come from the raw ones by a binomial
        // expansion whose cancellation leaves an error relative to the column's scale, not to each value.
        let column_scale = expected.iter().filter(|e| e.is_finite()).fold(0.0f64, |m, e| m.max(e.abs()));
        for (g, e) in got.iter().zip(&expected) {
            let ok = if e.is_nan() {
                g.is_nan()
            } else if name.starts_with("moments") {
                (g - e).abs() <= 1e-11 * column_scale.max(1.0)
            } else if exact.iter().any(|p| name.starts_with(p)) {
                g == e
            } else {
                let tolerance = if loose.iter().any(|p| name.starts_with(p)) { 1e-9 } else { 1e-12 };
                (g - e).abs() <= tolerance * e.abs().max(1.0)
            };
            if !ok {
                wrong.push(format!("{case} chunk {chunk:?} {name}: {g} vs skimage {e}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{} values differ:\n{}", wrong.len(), wrong.join("\n"));
}

/// The hull fixture (tests/fixtures/make_regionprops.py): skimage 0.26's area, area_convex and solidity of each
/// label of `hull_{case}.npy`, as (label, area, area_convex, solidity).
fn hull_reference(case: &str) -> Vec<[f64; 4]> {
    let path = format!("{}/hull.json", dir());
    let want: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let column = |name: &str| -> Vec<f64> { want[case][name].as_array().unwrap().iter().map(num).collect() };
    let (labels, areas, convex, solidity) =
        (column("label"), column("area"), column("area_convex"), column("solidity"));
    (0..labels.len()).map(|k| [labels[k], areas[k], convex[k], solidity[k]]).collect()
}

fn hull_table<T: RealElement>(case: &str, rows: LabelRows) -> Vec<f64> {
    let labels = device::<T>(&npy(&format!("hull_{case}")));
    let stats = [MeasureStat::Count, MeasureStat::AreaConvex, MeasureStat::Solidity];
    Measure::apply(None, &labels, MeasureParams::new(&stats, rows)).unwrap().to_vec().unwrap()
}

/// regionprops' area_convex and solidity against scikit-image 0.26 on awkward shapes (single pixels, lines along
/// and across the axes, L shapes, rings, distant pixels, scattered random pixels, ellipses; in 3-D regions flat in
/// a slice, on a line or in a plane at an angle — skimage's empty hull: 0 and inf —, a slab with one voxel off it,
/// a tetrahedron), of float32 and float64 labels. Exact: the areas are counts, the solidity one division of the
/// same integers.
#[test]
fn convex_hull_properties_equal_scikit_image_on_awkward_shapes() {
    for case in ["2d", "3d"] {
        let reference = hull_reference(case);
        let index: Vec<f64> = reference.iter().map(|r| r[0]).collect();
        for table in [
            hull_table::<f64>(case, LabelRows::Labels(index.clone())),
            hull_table::<f32>(case, LabelRows::Labels(index.clone())),
        ] {
            let rows: Vec<&[f64]> = table.chunks(4).collect();
            let wrong: Vec<String> = rows
                .iter()
                .zip(&reference)
                .filter(|(got, want)| got[..] != want[..])
                .map(|(got, want)| format!("{case}: label, area, area_convex, solidity {got:?} vs skimage {want:?}"))
                .collect();
            assert_eq!(rows.len(), reference.len());
            assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        }
    }
}

/// Rows as `index` names them, in its order: an absent label gives NaN (as every shape property of a label with no
/// element); every label above 0 as one region (index None) is the hull of them all.
#[test]
fn convex_hull_rows_follow_the_index() {
    let reference = hull_reference("2d");
    let table = hull_table::<f64>("2d", LabelRows::Labels(vec![11.0, 5.0, 2.0]));
    let row = |label: f64| reference.iter().find(|r| r[0] == label).unwrap();
    assert_eq!(&table[0..4], &row(11.0)[..]);
    assert_eq!(&table[8..12], &row(2.0)[..]);
    assert_eq!(table[4..6], [5.0, 0.0]);
    assert!(table[6].is_nan() && table[7].is_nan(), "{table:?}");
    let path = format!("{}/hull.json", dir());
    let want: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for case in ["2d", "3d"] {
        let all = hull_table::<f32>(case, LabelRows::Positive);
        assert_eq!(all[2], num(&want[case]["positive_area_convex"]), "{case}: {all:?}");
    }
}

#[test]
fn convex_hull_properties_of_one_axis_are_refused() {
    let line = XData::from_slice(app(), &[4], &[1.0f32, 1.0, 0.0, 1.0]).unwrap();
    let params = MeasureParams::new(&[MeasureStat::Solidity], LabelRows::Labels(vec![1.0]));
    let err = Measure::apply(None, &line, params).unwrap_err().to_string();
    assert!(err.contains("solidity") && err.contains("[4]") && !err.contains('\n'), "{err}");
}

/// regionprops' feret_diameter_max against scikit-image 0.26 on the hull fixtures (tests/fixtures/
/// make_regionprops.py): every 2-D label, and the 3-D labels skimage measures; a flat 3-D region, where skimage's
/// marching_cubes raises, is refused naming its label. Exact: the boundary points are half-integers, their squared
/// distances exact in float64 on both sides, and the square root rounded once.
#[test]
fn feret_diameters_equal_scikit_image() {
    let path = format!("{}/hull.json", dir());
    let want: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for case in ["2d", "3d"] {
        let labels = device::<f64>(&npy(&format!("hull_{case}")));
        let all: Vec<f64> = want[case]["label"].as_array().unwrap().iter().map(num).collect();
        let ferets = want[case]["feret_diameter_max"].as_array().unwrap();
        let (measured, flat): (Vec<(f64, &serde_json::Value)>, Vec<_>) =
            all.iter().copied().zip(ferets).partition(|(_, f)| !f.is_null());
        let index: Vec<f64> = measured.iter().map(|(l, _)| *l).collect();
        let params = MeasureParams::new(&[MeasureStat::FeretDiameterMax], LabelRows::Labels(index));
        let table = Measure::apply(None, &labels, params).unwrap().to_vec().unwrap();
        let expected: Vec<f64> = measured.iter().flat_map(|(l, f)| [*l, num(f)]).collect();
        assert_eq!(table, expected, "{case}");
        assert_eq!(flat.is_empty(), case == "2d");
        for (label, _) in flat {
            let params = MeasureParams::new(&[MeasureStat::FeretDiameterMax], LabelRows::Labels(vec![label]));
            let err = Measure::apply(None, &labels, params).err().unwrap().to_string();
            assert!(err.contains(&format!("feret_diameter_max of label {label}")) && !err.contains('\n'), "{err}");
        }
    }
}
