//! `resample-from-to` against nibabel.processing.resample_from_to (tests/fixtures/make_geometry.py, nibabel 5.4 on
//! scipy 1.17): a 1 mm axis-aligned float32 volume (11×13×9) onto a 1.5 mm oblique grid (10×12×8) and onto an
//! axis-aligned anisotropic one (6×11×6, a diagonal map that runs axis by axis), and the oblique volume onto the
//! 1 mm grid; spline orders 0, 1 and 3, modes constant (cval 0 and −1) and nearest. The step resolves its map
//! from the two geometries as a chain does (`Op::on_grids`) and plans on the device. Also: a 4-D series volume by
//! volume, refusals, and `Geometry::voxels_from` across units and through a sheared geometry.
//!
//! Tolerances: order 0 copies the sample nearest the coordinate, and no output voxel of these grids maps within
//! 1e-9 of a half-integer (boundaries.txt, counted by the script), so it is exact. Orders 1 and 3: cliper computes
//! float32 data in float32 (the coordinates in float64), scipy in float64 rounded to float32; on data in [0, 1)
//! a spline value is a sum of ≤ 64 taps whose weights' magnitudes sum to < 2 (cubic B-spline coefficients of such
//! data reach ±2), so 1e-5 absolute; observed ≤ 1.8e-7 (order 1) and ≤ 6e-7 (order 3) on PoCL.

use crate::common::app;
use cliper::chain::{AnyData, ElementKind, Op};
use cliper::{Geometry, HostArray, read_image, read_npy};
use ndarray::ArrayD;

fn fixture_path(name: &str) -> String {
    format!("{}/tests/fixtures/geometry/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn expected(name: &str) -> ArrayD<f64> {
    match read_npy(fixture_path(&format!("{name}.npy"))).unwrap() {
        HostArray::F32(a) => a.mapv(f64::from),
        other => panic!("{name} holds {:?}", other.dtype()),
    }
}

/// The output voxels the script found within 1e-9 of order 0's rounding boundary, per pair.
fn boundaries(pair: &str) -> usize {
    let text = std::fs::read_to_string(fixture_path("boundaries.txt")).unwrap();
    text.lines().filter_map(|l| l.split_once('\t')).find(|(p, _)| *p == pair).unwrap().1.parse().unwrap()
}

const PAIRS: [(&str, &str, &str); 3] =
    [("iso_to_oblique", "iso", "oblique"), ("iso_to_aligned", "iso", "aligned"), ("oblique_to_iso", "oblique", "iso")];

/// The step's keys for each case of the script.
const CASES: [(&str, &str); 5] = [
    ("order0", "order = 0"),
    ("order1", "order = 1"),
    ("order3", "order = 3"),
    ("order1_nearest", "order = 1\nmode = 'nearest'"),
    ("order3_cval", "order = 3\ncval = -1.0"),
];

/// `resample-from-to` of `input` onto `reference`'s grid with the step's `keys`, resolved and planned as a chain
/// does: the result's values and the geometry the step gives it.
fn resampled(input: &str, reference: &str, keys: &str) -> (ArrayD<f64>, Geometry) {
    let (input_path, reference_path) =
        (fixture_path(&format!("{input}.nii")), fixture_path(&format!("{reference}.nii")));
    let (image, target) = (read_image(&input_path).unwrap(), read_image(&reference_path).unwrap());
    let op: Op = toml::from_str(&format!("op = 'resample-from-to'\n{keys}")).unwrap();
    let shape = image.array.shape().to_vec();
    let grids = [(shape.as_slice(), image.geometry.as_ref()), (target.array.shape(), target.geometry.as_ref())];
    let op = op.resolved(&shape, false, image.geometry.as_ref()).unwrap().on_grids(&grids).unwrap();
    let x = AnyData::upload(app(), &image.array, ElementKind::F32, std::path::Path::new(&input_path)).unwrap();
    let r = AnyData::upload(app(), &target.array, ElementKind::F32, std::path::Path::new(&reference_path)).unwrap();
    let (mut process, y) = op.plan(&[&x, &r]).unwrap();
    process.run().unwrap();
    let geometry = op.geometry(&image.geometry.unwrap(), &shape, y.shape(), false).expect("the reference's grid");
    (y.to_host().unwrap().to_elements::<f64>(&input_path).unwrap(), geometry)
}

#[test]
fn resample_from_to_equals_nibabel() {
    for (pair, input, reference) in PAIRS {
        let target = read_image(fixture_path(&format!("{reference}.nii"))).unwrap();
        for (case, keys) in CASES {
            let (got, geometry) = resampled(input, reference, keys);
            let want = expected(&format!("{pair}_{case}"));
            assert_eq!(got.shape(), want.shape(), "{pair} {case}");
            assert_eq!(got.shape(), target.array.shape(), "{pair} {case}: the reference's shape");
            assert_eq!(Some(geometry), target.geometry, "{pair} {case}: the reference's geometry");
            let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0f64, f64::max);
            if case == "order0" {
                let differ = got.iter().zip(&want).filter(|(g, w)| g != w).count();
                assert!(differ <= boundaries(pair), "{pair} {case}: {differ} voxels differ (worst {worst:e})");
            } else {
                assert!(worst <= 1e-5, "{pair} {case}: worst difference {worst:e}");
            }
        }
    }
}

#[test]
fn resample_from_to_refuses_what_has_no_grid() {
    let image = read_image(fixture_path("iso.nii")).unwrap();
    let geometry = image.geometry.unwrap();
    let op: Op = toml::from_str("op = 'resample-from-to'").unwrap();
    let volume: &[usize] = &[9, 13, 11];
    for (grids, says) in [
        (vec![(volume, Some(&geometry)), (volume, None)], "REFERENCE (shape [9, 13, 11]) has none"),
        (vec![(volume, None), (volume, Some(&geometry))], "INPUT (shape [9, 13, 11]) has none"),
        (vec![(volume, Some(&geometry)), (&[13, 11][..], Some(&geometry))], "REFERENCE needs three spatial axes"),
    ] {
        let err = op.on_grids(&grids).unwrap_err().to_string();
        assert!(err.contains(says), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // A degenerate input geometry (two axes along one direction) has no inverse.
    let flat = Geometry { direction: [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]], ..geometry };
    let err = op.on_grids(&[(volume, Some(&flat)), (volume, Some(&geometry))]).unwrap_err().to_string();
    assert!(err.contains("resample-from-to (INPUT)") && err.contains("span no volume"), "{err}");
    // Without a resolved grid (plain arrays, as Python's apply gives them) planning refuses.
    let x = AnyData::upload(app(), &image.array, ElementKind::F32, std::path::Path::new("iso.nii")).unwrap();
    let err = op.plan(&[&x, &x]).err().unwrap().to_string();
    assert!(err.contains("needs the geometries of INPUT and REFERENCE"), "{err}");
}

#[test]
fn resample_from_to_leaves_the_axes_before_the_spatial_ones() {
    // A 4-D series of two volumes (the second the first doubled): each resampled as the volume alone is, within
    // float32 rounding (the same taps summed; doubling is exact), the time step kept.
    let input_path = fixture_path("iso.nii");
    let image = read_image(&input_path).unwrap();
    let target = read_image(fixture_path("oblique.nii")).unwrap();
    let volume = image.array.to_elements::<f32>(&input_path).unwrap();
    let series = ndarray::stack(ndarray::Axis(0), &[volume.view(), volume.mapv(|v| 2.0 * v).view()]).unwrap();
    let shape = series.shape().to_vec();
    let geometry = Geometry { time_step: Some(2.5), ..image.geometry.unwrap() };
    let op: Op = toml::from_str("op = 'resample-from-to'\norder = 3").unwrap();
    let grids = [(shape.as_slice(), Some(&geometry)), (target.array.shape(), target.geometry.as_ref())];
    let op = op.resolved(&shape, false, Some(&geometry)).unwrap().on_grids(&grids).unwrap();
    let x = AnyData::upload(app(), &HostArray::F32(series), ElementKind::F32, std::path::Path::new("series")).unwrap();
    let (mut process, y) = op.plan(&[&x, &x]).unwrap();
    process.run().unwrap();
    let got = y.to_host().unwrap().to_elements::<f64>("series").unwrap();
    let (alone, _) = resampled("iso", "oblique", "order = 3");
    assert_eq!(got.shape(), &[2, 8, 12, 10]);
    for (k, factor) in [(0, 1.0), (1, 2.0)] {
        let worst = got
            .index_axis(ndarray::Axis(0), k)
            .iter()
            .zip(&alone)
            .map(|(g, a)| (g - factor * a).abs())
            .fold(0.0f64, f64::max);
        assert!(worst <= 1e-6, "volume {k}: worst difference {worst:e}");
    }
    let kept = op.geometry(&geometry, &shape, y.shape(), false).unwrap();
    assert_eq!(kept, Geometry { time_step: Some(2.5), ..target.geometry.unwrap() });
}

#[test]
fn voxel_maps_compose_in_millimetres_and_through_shear() {
    // An input in micrometres (1000 µm voxels) and a reference in millimetres (2 mm voxels): a reference voxel is
    // two input voxels along every axis. (nibabel ignores xyzt_units; cliper's positions are millimetres.)
    let input = Geometry { units: cliper::SpaceUnit::Micrometre, ..Geometry::from_spacing([1000.0; 3]) };
    let reference = Geometry { origin: [1.0, 2.0, 3.0], ..Geometry::from_spacing([2.0; 3]) };
    let (matrix, offset) = input.voxels_from(&reference).unwrap();
    let want = ([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]], [3.0, 2.0, 1.0]);
    for r in 0..3 {
        assert!((offset[r] - want.1[r]).abs() <= 1e-12, "{offset:?}");
        for c in 0..3 {
            assert!((matrix[r][c] - want.0[r][c]).abs() <= 1e-12, "{matrix:?}");
        }
    }
    // A sheared (gantry-tilted) geometry onto itself: the identity, within rounding (1e-14 on entries ≤ 1).
    let (s, c) = 0.2f64.sin_cos();
    let tilted = Geometry {
        spacing: [2.5, 0.7, 0.6],
        origin: [10.0, -20.0, 30.0],
        direction: [[0.0, s, c], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],
        ..Geometry::default()
    };
    let (matrix, offset) = tilted.voxels_from(&tilted).unwrap();
    for r in 0..3 {
        assert!(offset[r].abs() <= 1e-13, "{offset:?}");
        for c in 0..3 {
            assert!((matrix[r][c] - if r == c { 1.0 } else { 0.0 }).abs() <= 1e-14, "{matrix:?}");
        }
    }
}
