//! The distance transforms' feature transforms (the indices of the nearest zero elements, scipy's
//! `return_indices`) against scipy.ndimage 1.17 (tests/fixtures/make_distance.py): masks of 37 × 45 and
//! 13 × 17 × 11 with few zeros, so that many elements have several nearest zeros and the tie rules show.

use crate::common::app;
use cliper::{
    BruteForceDistance, BruteForceMetric, BruteForceParams, ChamferDistance, ChamferParams, DistanceParams,
    DistanceTransform, Footprint, RealElement, XData, read_npy,
};
use ndarray::ArrayD;

fn fixture(name: &str) -> ArrayD<f64> {
    let path = format!("{}/tests/fixtures/distance/{name}.npy", env!("CARGO_MANIFEST_DIR"));
    read_npy(&path).unwrap().to_elements::<f64>(&path).unwrap()
}

fn device<T: RealElement>(a: &ArrayD<f64>) -> XData<T> {
    XData::from_ndarray(app(), &a.mapv(|v| T::from_c64(v.into()))).unwrap()
}

fn real<T: RealElement>(x: &XData<T>) -> Vec<f64> {
    x.to_vec().unwrap().iter().map(|v| v.to_c64().re).collect()
}

/// The coordinates of element `flat` (C order) of `shape`.
fn coordinates(shape: &[usize], mut flat: usize) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for (a, n) in shape.iter().enumerate().rev() {
        c[a] = flat % n;
        flat /= n;
    }
    c
}

/// The squared distance from `from` to `to` with the spacing `sampling`, in scipy's order of operations.
fn squared(from: &[usize], to: &[f64], sampling: &[f64]) -> f64 {
    from.iter().zip(to).zip(sampling).map(|((&f, &t), s)| ((t - f as f64) * s).powi(2)).sum()
}

/// Exact for every element where the squared spacings are whole numbers or powers of two (every distance sum is
/// then exact in any arithmetic, so ties are ties here as in scipy): the indices equal scipy's, ties included.
fn check_exact<T: RealElement>() {
    for (name, input, sampling) in [
        ("edt_2d", "m2", vec![1.0]),
        ("edt_2d_s2_1", "m2", vec![2.0, 1.0]),
        ("edt_3d", "m3", vec![1.0]),
        ("edt_3d_s3_1_05", "m3", vec![3.0, 1.0, 0.5]),
    ] {
        let x = device::<T>(&fixture(input));
        let got = DistanceTransform::apply(&x, DistanceParams::default().sampling(&sampling).indices(true)).unwrap();
        let want = fixture(&format!("{name}_indices"));
        assert_eq!(got.shape(), want.shape(), "{name}");
        let got = real(&got);
        let wrong = got.iter().zip(want.iter()).filter(|(g, w)| *g != *w).count();
        assert_eq!(wrong, 0, "{name} ({}): {wrong} of {} indices differ from scipy's", T::NAME, want.len());
    }
}

#[test]
fn edt_indices_equal_scipy_ties_included() {
    check_exact::<f64>();
    check_exact::<f32>();
}

/// Spacings whose squares round (2.5, 0.7): every index names a zero element at the returned distance (1e-12
/// relative: the distances' own rounding), and equals scipy's wherever the nearest zero is unique (no other zero
/// within 1e-9 relative of the nearest — brute force over the zeros).
#[test]
fn edt_indices_with_rounding_spacings_point_at_a_nearest_zero() {
    let m = fixture("m2");
    let sampling = [2.5, 0.7];
    let x = device::<f64>(&m);
    let params = DistanceParams::default().sampling(&sampling);
    let distances = real(&DistanceTransform::apply(&x, params.clone()).unwrap());
    let indices = real(&DistanceTransform::apply(&x, params.indices(true)).unwrap());
    let want = fixture("edt_2d_s25_07_indices");
    let shape = m.shape().to_vec();
    let count = m.len();
    let zeros: Vec<Vec<usize>> =
        (0..count).filter(|&i| m.as_slice().unwrap()[i] == 0.0).map(|i| coordinates(&shape, i)).collect();
    let (mut unique, mut tied) = (0, 0);
    for i in 0..count {
        let here = coordinates(&shape, i);
        let index = [indices[i], indices[count + i]];
        let flat = index[0] as usize * shape[1] + index[1] as usize;
        assert_eq!(m.as_slice().unwrap()[flat], 0.0, "element {here:?}: index {index:?} is not a zero element");
        let d = squared(&here, &index, &sampling).sqrt();
        assert!((d - distances[i]).abs() <= 1e-12 * d.max(1.0), "element {here:?}: {d} vs distance {}", distances[i]);
        let nearest: Vec<f64> =
            zeros.iter().map(|z| squared(&here, &z.iter().map(|&c| c as f64).collect::<Vec<_>>(), &sampling)).collect();
        let best = nearest.iter().cloned().fold(f64::INFINITY, f64::min);
        if nearest.iter().filter(|&&n| n <= best * (1.0 + 1e-9)).count() == 1 {
            unique += 1;
            assert_eq!(index, [want[[0, here[0], here[1]]], want[[1, here[0], here[1]]]], "element {here:?}");
        } else {
            tied += 1;
        }
    }
    assert!(unique > 1000 && tied > 10, "unique {unique}, tied {tied}");
}

/// No zero at all: scipy's indices are -1 along the first axis and 0 along the others; all zeros index
/// themselves; a 1-D line; rank 2 of a 3-D array (slice by slice) keeps each element's own first coordinate.
#[test]
fn edt_indices_edge_cases_as_scipy() {
    let ones = XData::from_slice(app(), &[3, 4], &[1.0f32; 12]).unwrap();
    let got = real(&DistanceTransform::apply(&ones, DistanceParams::default().indices(true)).unwrap());
    assert_eq!(got, [vec![-1.0; 12], vec![0.0; 12]].concat());
    let zeros = XData::<f64>::zeros(app(), &[2, 3]).unwrap();
    let got = real(&DistanceTransform::apply(&zeros, DistanceParams::default().indices(true)).unwrap());
    assert_eq!(got, vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    // scipy.ndimage.distance_transform_edt([1, 0, 1, 1, 0, 1, 1], return_indices=True)[1]: ties to the left.
    let line = XData::from_slice(app(), &[7], &[1.0f64, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]).unwrap();
    let got = real(&DistanceTransform::apply(&line, DistanceParams::default().indices(true)).unwrap());
    assert_eq!(got, vec![1.0, 1.0, 1.0, 4.0, 4.0, 4.0, 4.0]);
    // Slice by slice: slice 0 has a zero at (0, 1, 1), slice 1 has none (-1 on its first spanned axis).
    let mut values = vec![1.0f64; 2 * 2 * 3];
    values[4] = 0.0;
    let stack = XData::from_slice(app(), &[2, 2, 3], &values).unwrap();
    let got = real(&DistanceTransform::apply(&stack, DistanceParams::default().rank(2).indices(true)).unwrap());
    let own = [0.0; 6].iter().chain(&[1.0; 6]).cloned().collect::<Vec<_>>();
    let first = [1.0; 6].iter().chain(&[-1.0; 6]).cloned().collect::<Vec<_>>();
    let second = [1.0; 6].iter().chain(&[0.0; 6]).cloned().collect::<Vec<_>>();
    assert_eq!(got, [own, first, second].concat());
}

/// distance_transform_cdt, chessboard and taxicab, 2-D and 3-D: distances and indices equal scipy's at every
/// element (exact: whole numbers, and the same raster passes, so the same choice among equally near zeros).
fn check_chamfer<T: RealElement>() {
    for metric in ["taxicab", "chessboard"] {
        for (dim, input) in [("2d", "m2"), ("3d", "m3")] {
            let m = fixture(input);
            let params = match metric {
                "taxicab" => ChamferParams::taxicab(m.ndim()).unwrap(),
                _ => ChamferParams::chessboard(m.ndim()).unwrap(),
            };
            let x = device::<T>(&m);
            for (suffix, p) in [("", params.clone()), ("_indices", params.indices(true))] {
                let name = format!("cdt_{metric}_{dim}{suffix}");
                let got = ChamferDistance::apply(&x, p).unwrap();
                let want = fixture(&name);
                assert_eq!(got.shape(), want.shape(), "{name}");
                let wrong = real(&got).iter().zip(want.iter()).filter(|(g, w)| *g != *w).count();
                assert_eq!(wrong, 0, "{name} ({}): {wrong} of {} differ from scipy's", T::NAME, want.len());
            }
        }
    }
}

#[test]
fn cdt_equals_scipy_ties_included() {
    check_chamfer::<f64>();
    check_chamfer::<f32>();
}

/// scipy's cdt of an input without zeros: -1 everywhere and each element its own index; of zeros alone: 0. A
/// structure of one step up plus one in its second half, which scipy ignores (its backward pass takes the first
/// half reversed, not the second half):
/// scipy.ndimage.distance_transform_cdt(a, metric=s) for a = 1 but a[2, 2] = 0 in 5 × 5 and s the 3 × 3 with
/// s[0, 1] and s[2, 2] set: only the zero's column is reached.
#[test]
fn cdt_edge_cases_as_scipy() {
    let ones = XData::from_slice(app(), &[2, 3], &[1.0f32; 6]).unwrap();
    let got = real(&ChamferDistance::apply(&ones, ChamferParams::chessboard(2).unwrap()).unwrap());
    assert_eq!(got, vec![-1.0; 6]);
    let got = real(&ChamferDistance::apply(&ones, ChamferParams::taxicab(2).unwrap().indices(true)).unwrap());
    assert_eq!(got, vec![0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
    let zeros = XData::<f64>::zeros(app(), &[3, 4]).unwrap();
    let got = real(&ChamferDistance::apply(&zeros, ChamferParams::taxicab(2).unwrap()).unwrap());
    assert_eq!(got, vec![0.0; 12]);
    let mut values = vec![1.0f64; 25];
    values[12] = 0.0;
    let x = XData::from_slice(app(), &[5, 5], &values).unwrap();
    let steps = Footprint::new(&[3, 3], vec![false, true, false, false, false, false, false, false, true]).unwrap();
    let got = real(&ChamferDistance::apply(&x, ChamferParams::structure(steps)).unwrap());
    let want: Vec<f64> = (0..25i32).map(|i| if i % 5 == 2 { f64::from((i / 5 - 2).abs()) } else { -1.0 }).collect();
    assert_eq!(got, want);
    let e = ChamferDistance::apply(&x, ChamferParams::structure(Footprint::full(&[3, 5]).unwrap())).unwrap_err();
    assert!(e.to_string().contains("must be 3 along every axis, not [3, 5]"), "{e}");
}

/// distance_transform_bf (37 × 45): taxicab and chessboard distances (whole numbers) and every metric's indices
/// equal scipy's exactly, ties included (the highest position); Euclidean distances with sampling (2, 1) within
/// 1e-15 relative in float64 (the same sums of squares, one square root) and 1e-6 in float32.
fn check_brute_force<T: RealElement>(euclidean_tol: f64) {
    let x = device::<T>(&fixture("m2"));
    for (name, metric, sampling) in [
        ("bf_taxicab_2d", BruteForceMetric::Taxicab, vec![1.0]),
        ("bf_chessboard_2d", BruteForceMetric::Chessboard, vec![1.0]),
        ("bf_euclidean_2d_s2_1", BruteForceMetric::Euclidean, vec![2.0, 1.0]),
    ] {
        let params = BruteForceParams::new(metric).sampling(&sampling);
        let got = real(&BruteForceDistance::apply(&x, params.clone()).unwrap());
        let want = fixture(name);
        let tol = if metric == BruteForceMetric::Euclidean { euclidean_tol } else { 0.0 };
        for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
            assert!((g - w).abs() <= tol * w.max(1.0), "{name} ({}) [{i}]: {g} vs scipy {w}", T::NAME);
        }
        let got = BruteForceDistance::apply(&x, params.indices(true)).unwrap();
        let want = fixture(&format!("{name}_indices"));
        assert_eq!(got.shape(), want.shape());
        let wrong = real(&got).iter().zip(want.iter()).filter(|(g, w)| *g != *w).count();
        assert_eq!(wrong, 0, "{name} indices ({}): {wrong} of {} differ from scipy's", T::NAME, want.len());
    }
}

#[test]
fn bf_equals_scipy_ties_included() {
    check_brute_force::<f64>(1e-15);
    check_brute_force::<f32>(1e-6);
}

/// No zero: scipy's sqrt(DBL_MAX) (Euclidean) and UINT_MAX (taxicab), index 0; a 3-D input; refusals.
#[test]
fn bf_edge_cases_as_scipy() {
    let ones = XData::from_slice(app(), &[2, 3], &[1.0f64; 6]).unwrap();
    let got = real(&BruteForceDistance::apply(&ones, BruteForceParams::new(BruteForceMetric::Euclidean)).unwrap());
    assert_eq!(got, vec![f64::MAX.sqrt(); 6]);
    let got = real(&BruteForceDistance::apply(&ones, BruteForceParams::new(BruteForceMetric::Taxicab)).unwrap());
    assert_eq!(got, vec![f64::from(u32::MAX); 6]);
    let p = BruteForceParams::new(BruteForceMetric::Chessboard).indices(true);
    assert_eq!(real(&BruteForceDistance::apply(&ones, p).unwrap()), vec![0.0; 12]);
    // 3-D against the EDT (the distances are equal whatever the ties): 1e-12 relative.
    let m = fixture("m3");
    let x = device::<f64>(&m);
    let bf = real(&BruteForceDistance::apply(&x, BruteForceParams::new(BruteForceMetric::Euclidean)).unwrap());
    let edt = fixture("edt_3d");
    assert!(bf.iter().zip(edt.iter()).all(|(b, e)| (b - e).abs() <= 1e-12 * e.max(1.0)));
    let e = BruteForceMetric::parse("minkowski").unwrap_err().to_string();
    assert!(e.contains("metric `minkowski` is not euclidean"), "{e}");
    let e = BruteForceDistance::apply(&x, BruteForceParams::new(BruteForceMetric::Euclidean).sampling(&[1.0, 2.0]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("gives 2 spacings for 3 axes"), "{e}");
}

/// A 2-D structure over a 3-D input: each slice alone (the slice's own cdt, computed separately), indices with the
/// slice's own first coordinate — exact.
#[test]
fn cdt_slice_by_slice_is_each_slice_alone() {
    let m = fixture("m3");
    let x = device::<f64>(&m);
    let params = ChamferParams::taxicab(2).unwrap();
    let stack = real(&ChamferDistance::apply(&x, params.clone()).unwrap());
    let indices = real(&ChamferDistance::apply(&x, params.clone().indices(true)).unwrap());
    let (slices, per) = (m.shape()[0], m.shape()[1] * m.shape()[2]);
    for k in 0..slices {
        let slice = device::<f64>(&m.index_axis(ndarray::Axis(0), k).to_owned().into_dyn());
        let alone = real(&ChamferDistance::apply(&slice, params.clone()).unwrap());
        assert_eq!(&stack[k * per..(k + 1) * per], alone.as_slice(), "slice {k}");
        let alone = real(&ChamferDistance::apply(&slice, params.clone().indices(true)).unwrap());
        let count = slices * per;
        assert!(indices[k * per..(k + 1) * per].iter().all(|&v| v == k as f64), "slice {k}: own first coordinate");
        assert_eq!(&indices[count + k * per..count + (k + 1) * per], &alone[..per], "slice {k} rows");
        assert_eq!(&indices[2 * count + k * per..2 * count + (k + 1) * per], &alone[per..], "slice {k} columns");
    }
}
