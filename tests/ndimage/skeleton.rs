//! skeletonize against scikit-image 0.26 (tests/fixtures/make_skeleton.py): skeletons are 0/1, so every element must
//! equal skimage's exactly (tolerance 0), in float32 and float64 — 2-D masks of 37×45 (random blobs, a ring, a thick
//! line, objects along every edge) by Zhang's thinning (the 2-D default) and by Lee's, 3-D masks of 13×17×11 and 24³
//! and a 3-D image of one plane by Lee's; inputs of other non-zero values (negative, fractional, NaN) as their
//! masks; strided views in and out; skimage's refusals.

use crate::common::app;
use cliper::{HostArray, Process, RealElement, SkeletonMethod, SkeletonParams, Skeletonize, XData, read_npy};
use ndarray::{ArrayD, Axis};
use num_complex::Complex64;

fn fixture(name: &str) -> ArrayD<f64> {
    match read_npy(format!("{}/tests/fixtures/skeleton/{name}.npy", env!("CARGO_MANIFEST_DIR"))).unwrap() {
        HostArray::U8(a) => a.mapv(f64::from),
        other => panic!("{name}: {:?}", other.dtype()),
    }
}

fn upload<T: RealElement>(a: &ArrayD<f64>) -> XData<T> {
    XData::from_ndarray(app(), &a.mapv(|v| T::from_c64(Complex64::new(v, 0.0)))).unwrap()
}

fn values<T: RealElement>(x: &XData<T>) -> Vec<f64> {
    x.to_vec().unwrap().iter().map(|v| v.to_c64().re).collect()
}

/// The elements of `got` that differ from the fixture `name`, after checking that the fixture thinned its mask
/// (or the test could not fail).
fn differences(got: &[f64], name: &str, mask: &str) -> usize {
    let want = fixture(name);
    assert_ne!(want, fixture(mask), "{name}: the fixture is its mask");
    got.iter().zip(want.iter()).filter(|(g, w)| g != w).count()
}

fn check<T: RealElement>() {
    let lee = SkeletonParams::default().method(SkeletonMethod::Lee);
    let zhang = SkeletonParams::default().method(SkeletonMethod::Zhang);
    let mut cases = Vec::new();
    for mask in ["blobs2", "ring2", "line2", "border2"] {
        cases.push((format!("{mask}_zhang"), mask, SkeletonParams::default()));
        cases.push((format!("{mask}_zhang"), mask, zhang.clone()));
        cases.push((format!("{mask}_lee"), mask, lee.clone()));
    }
    for mask in ["blobs3", "blob24", "plane3"] {
        cases.push((format!("{mask}_lee"), mask, SkeletonParams::default()));
    }
    for (name, mask, params) in cases {
        let got = values(&Skeletonize::apply(&upload::<T>(&fixture(mask)), params).unwrap());
        assert_eq!(differences(&got, &name, mask), 0, "{name}: elements differ from skimage");
    }
}

#[test]
fn skeletonize_matches_skimage_f32() {
    check::<f32>();
}

#[test]
fn skeletonize_matches_skimage_f64() {
    check::<f64>();
}

/// skimage's astype(bool): any non-zero value, NaN included, is foreground.
#[test]
fn non_zero_values_and_nan_are_foreground() {
    for (mask, params) in [("blobs2", SkeletonParams::default()), ("blobs3", SkeletonParams::default())] {
        let mut n = 0usize;
        let valued = fixture(mask).mapv(|v| {
            n += 1;
            match (v != 0.0, n % 4) {
                (false, _) => 0.0,
                (true, 0) => f64::NAN,
                (true, 1) => -2.5,
                (true, 2) => 0.25,
                (true, _) => 7.0,
            }
        });
        let got = values(&Skeletonize::apply(&upload::<f32>(&valued), params).unwrap());
        let name = if mask == "blobs2" { "blobs2_zhang" } else { "blobs3_lee" };
        assert_eq!(differences(&got, name, mask), 0, "{name} from non-binary values");
    }
}

/// Transposed views in and out, the output inside a larger array: the same skeleton, written only where the view
/// lies.
#[test]
fn views_in_and_out() {
    for (mask, name, params) in
        [("blobs2", "blobs2_zhang", SkeletonParams::default()), ("blobs3", "blobs3_lee", SkeletonParams::default())]
    {
        let m = fixture(mask);
        let nd = m.ndim();
        let reversed: Vec<usize> = (0..nd).rev().collect();
        // The mask stored transposed, read through the transposed view.
        let stored = m.view().permuted_axes(reversed.clone()).as_standard_layout().to_owned();
        let input = upload::<f64>(&stored).permuted_axes(&reversed).unwrap();
        // The output: the transposed view of rows 2.. of a larger array of 5s.
        let mut big_shape: Vec<usize> = m.shape().iter().rev().copied().collect();
        big_shape[nd - 1] += 3;
        let big = upload::<f64>(&ArrayD::from_elem(big_shape, 5.0));
        let out = big.slice_axis(nd - 1, 2..2 + m.shape()[0]).unwrap().permuted_axes(&reversed).unwrap();
        Skeletonize::new(&input, &out, params).run().unwrap();
        let all = big.to_ndarray().unwrap();
        let inside = all.slice_axis(Axis(nd - 1), ndarray::Slice::from(2..2 + m.shape()[0]));
        let got: Vec<f64> = inside.permuted_axes(reversed.clone()).iter().copied().collect();
        assert_eq!(differences(&got, name, mask), 0, "{name} through views");
        let outside = all.iter().filter(|&&v| v == 5.0).count();
        assert_eq!(outside, all.len() - got.len(), "{name}: wrote outside the output view");
    }
}

/// Empty images, an image without foreground and a single point: what skimage gives (nothing to thin; a lone
/// point stays).
#[test]
fn edge_cases() {
    let empty = XData::<f32>::zeros(app(), &[0, 7]).unwrap();
    assert_eq!(Skeletonize::apply(&empty, SkeletonParams::default()).unwrap().shape(), &[0, 7]);
    for shape in [[9usize, 8].as_slice(), &[5, 6, 4]] {
        let zeros = XData::<f32>::zeros(app(), shape).unwrap();
        assert!(values(&Skeletonize::apply(&zeros, SkeletonParams::default()).unwrap()).iter().all(|&v| v == 0.0));
        let n: usize = shape.iter().product();
        let mut point = vec![0.0f32; n];
        point[n / 2 + 2] = 1.0;
        let x = XData::from_slice(app(), shape, &point).unwrap();
        let got = values(&Skeletonize::apply(&x, SkeletonParams::default()).unwrap());
        assert_eq!(got, point.iter().map(|&v| f64::from(v)).collect::<Vec<_>>(), "{shape:?}");
    }
}

/// skimage's refusals, each one line naming what was wrong: Zhang in 3-D, and inputs of 1 or 4 axes.
#[test]
fn refusals_name_the_shape_in_one_line() {
    let zhang = SkeletonParams::default().method(SkeletonMethod::Zhang);
    let cases = [(vec![4usize, 5, 6], zhang, "zhang"), (vec![7], SkeletonParams::default(), "2-D or 3-D")];
    for (shape, params, says) in cases.into_iter().chain([(vec![2, 3, 4, 5], SkeletonParams::default(), "4 axes")]) {
        let x = XData::<f32>::zeros(app(), &shape).unwrap();
        let message = Skeletonize::apply(&x, params).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains(says) && message.contains(&format!("{shape:?}")), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }
}

/// A process launched again after its input changed (what a batch run does with a built chain): each launch thins
/// the input as it is then — Zhang's second scratch keeps its zero border, Lee's scratch is rewritten.
#[test]
fn a_second_launch_thins_the_new_input() {
    for (first, second, params) in [
        (("ring2", "ring2_zhang"), ("blobs2", "blobs2_zhang"), SkeletonParams::default()),
        (("ring2", "ring2_lee"), ("line2", "line2_lee"), SkeletonParams::default().method(SkeletonMethod::Lee)),
    ] {
        let x = upload::<f32>(&fixture(first.0));
        let y = XData::<f32>::zeros(app(), x.shape()).unwrap();
        let mut process = Skeletonize::new(&x, &y, params);
        process.run().unwrap();
        assert_eq!(differences(&values(&y), first.1, first.0), 0, "{}: first launch", first.1);
        let next: Vec<f32> = fixture(second.0).iter().map(|&v| v as f32).collect();
        x.write(&next).unwrap();
        process.launch().unwrap();
        assert_eq!(differences(&values(&y), second.1, second.0), 0, "{}: second launch", second.1);
    }
}
