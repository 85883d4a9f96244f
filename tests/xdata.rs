//! XData: transfers, views and device-side copies against ndarray, for every element type.
//!
//! Tolerance: exact equality — uploads, downloads, views and copies move bits without arithmetic.

mod common;
use cliper::prelude::*;
use common::*;
use ndarray::{ArrayD, Axis, IxDyn, Slice};

fn roundtrip<T: Element>() {
    let mut rng = Rng::new(20);
    for shape in [&[1usize][..], &[7, 129], &[3, 1, 257], &[0, 4], &[]] {
        let (x, host) = random::<T>(&mut rng, shape);
        assert_eq!(x.shape(), shape);
        assert!(x.is_contiguous());
        assert_same(&fetch(&x), &host, &format!("{} roundtrip {shape:?}", T::NAME));
    }
    let z = XData::<T>::zeros(app(), &[129, 7]).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|v| *v == T::default()));
    // Past 8 MiB a GPU's transfers go through page-locked chunks of 32 MiB (none is a multiple of it here): whole,
    // and into the rows after the first three (a contiguous view at an offset), those three left as they were.
    let (x, host) = random::<T>(&mut rng, &[2053, 1031]);
    assert_same(&fetch(&x), &host, &format!("{} large roundtrip", T::NAME));
    let rows: Vec<T> = rng.vec(2050 * 1031);
    x.slice_axis(0, 3..2053).unwrap().write(&rows).unwrap();
    let mut want = host.clone();
    let wide: Vec<Complex64> = rows.iter().map(|v| v.to_c64()).collect();
    want.slice_axis_mut(Axis(0), Slice::from(3..)).assign(&ArrayD::from_shape_vec(IxDyn(&[2050, 1031]), wide).unwrap());
    assert_same(&fetch(&x), &want, &format!("{} large write at an offset", T::NAME));
    let mut tail = vec![T::default(); 2040 * 1031];
    x.slice_axis(0, 13..2053).unwrap().read_into(&mut tail).unwrap();
    assert!(tail[..] == rows[10 * 1031..], "{} large read at an offset", T::NAME);
}

#[test]
fn upload_and_download_roundtrip() {
    for_each_element!(roundtrip);
}

fn views<T: Element>() {
    let mut rng = Rng::new(21);
    let (x, host) = random::<T>(&mut rng, &[5, 33, 129]);
    let check = |v: &XData<T>, want: ndarray::ArrayD<num_complex::Complex64>, what: &str| {
        assert_eq!(v.shape(), want.shape(), "{what}");
        assert_same(&fetch(v), &want, &format!("{} {what}", T::NAME));
        // contiguous() gathers on the device and gives the same elements
        let c = v.contiguous().unwrap();
        assert!(c.is_contiguous());
        assert_same(&fetch(&c), &want, &format!("{} contiguous({what})", T::NAME));
    };
    check(&x.t(), host.clone().permuted_axes(IxDyn(&[0, 2, 1])).to_owned(), "t()");
    check(&x.permuted_axes(&[2, 0, 1]).unwrap(), host.clone().permuted_axes(IxDyn(&[2, 0, 1])).to_owned(), "permuted");
    let mut s = host.clone();
    s.slice_axis_inplace(Axis(2), Slice::from(3..100));
    check(&x.slice_axis(2, 3..100).unwrap(), s.clone(), "slice_axis(2, 3..100)");
    check(&x.index_axis(1, 32).unwrap(), host.index_axis(Axis(1), 32).to_owned(), "index_axis(1, 32)");
    check(
        &x.slice_axis(0, 1..=3).unwrap().t(),
        {
            let mut a = host.clone();
            a.slice_axis_inplace(Axis(0), Slice::from(1..4));
            a.permuted_axes(IxDyn(&[0, 2, 1])).to_owned()
        },
        "slice then t()",
    );
    check(&x.reshape(&[165, 129]).unwrap(), host.clone().into_shape_with_order(IxDyn(&[165, 129])).unwrap(), "reshape");
    check(&x.slice_axis(0, 2..2).unwrap(), ndarray::ArrayD::zeros(IxDyn(&[0, 33, 129])), "empty slice");
}

#[test]
fn views_read_like_ndarray_views() {
    for_each_element!(views);
}

fn writes<T: Element>() {
    let mut rng = Rng::new(22);
    let x = XData::<T>::zeros(app(), &[33, 65]).unwrap();
    let data: Vec<T> = rng.vec(65 * 20);
    // Writing through a transposed, sliced view scatters on the device.
    let view = x.slice_axis(0, 10..30).unwrap().t();
    view.write(&data).unwrap();
    let mut want = ndarray::ArrayD::<num_complex::Complex64>::zeros(IxDyn(&[33, 65]));
    for (n, v) in data.iter().enumerate() {
        let (j, i) = (n / 20, n % 20);
        want[[10 + i, j]] = v.to_c64();
    }
    assert_same(&fetch(&x), &want, &format!("{} write through a view", T::NAME));
    // copy_from between two strided views
    let y = XData::<T>::zeros(app(), &[65, 33]).unwrap();
    y.copy_from(&x.t()).unwrap();
    assert_same(&fetch(&y), &want.clone().permuted_axes(IxDyn(&[1, 0])).to_owned(), &format!("{} copy_from", T::NAME));
}

#[test]
fn writes_and_copies_through_views() {
    for_each_element!(writes);
}

#[test]
fn ndarray_conversions_keep_shape_and_order() {
    let a = ndarray::Array3::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 100 + j * 10 + k) as f64);
    let x = XData::from_ndarray(app(), &a).unwrap();
    assert_eq!(x.to_ndarray().unwrap(), a.clone().into_dyn());
    let swapped = a.clone().permuted_axes([2, 0, 1]);
    let y = XData::from_ndarray(app(), &swapped).unwrap();
    assert_eq!(y.to_ndarray().unwrap(), swapped.into_dyn());
}

#[test]
fn strided_copy_picks_the_cheapest_plan() {
    let x = XData::<f32>::zeros(app(), &[64, 64]).unwrap();
    let y = XData::<f32>::zeros(app(), &[64, 64]).unwrap();
    let plan = |src: &XData<f32>, dst: &XData<f32>| {
        let mut c = StridedCopy::new(src, dst, CopyParams::default());
        cliper::Process::init(&mut c).unwrap();
        c.strategy().unwrap()
    };
    assert_eq!(plan(&x, &y), CopyStrategy::Buffer);
    let cpu = app().device().kind == cliper::DeviceKind::Cpu;
    assert!(
        matches!(plan(&x.t(), &y), CopyStrategy::Blocks { .. } if cpu)
            || matches!(plan(&x.t(), &y), CopyStrategy::Tiled(_) if !cpu)
    );
    let a = x.slice_axis(1, 0..32).unwrap();
    let b = y.slice_axis(1, 32..64).unwrap();
    assert_eq!(plan(&a, &b), CopyStrategy::Rows);
}

/// map_coordinates reads its coordinates and writes its output from their buffers' start: a view at an offset (a
/// frame of a batch) is refused naming it, and its contiguous copy gives the frame's own result.
#[test]
fn map_coordinates_refuses_coordinates_at_an_offset() {
    use cliper::{Interpolation, MapCoordinates};
    let app = common::app();
    let image: Vec<f32> = (0..16 * 16).map(|i| (i as f32 * 0.37).sin()).collect();
    let image = XData::from_slice(app, &[16, 16], &image).unwrap();
    let coords: Vec<f32> = (0..10).map(|i| (i % 5) as f32 * 2.5).collect();
    let two = XData::from_slice(app, &[2, 2, 5], &[vec![0.0f32; 10], coords.clone()].concat()).unwrap();
    let view = two.index_axis(0, 1).unwrap();
    let refused = MapCoordinates::apply(&image, &view, Interpolation::default()).unwrap_err().to_string();
    assert!(refused.contains("at an offset into its buffer"), "{refused}");
    let want =
        MapCoordinates::apply(&image, &XData::from_slice(app, &[2, 5], &coords).unwrap(), Interpolation::default())
            .unwrap()
            .to_vec()
            .unwrap();
    let got = MapCoordinates::apply(&image, &view.contiguous().unwrap(), Interpolation::default()).unwrap();
    assert_eq!(got.to_vec().unwrap(), want);
}

/// Processes given frame 1 of a batch (`index_axis(0, 1)`: contiguous, at an offset into its buffer) compute what
/// they compute on its packed copy, or refuse it naming the fix — never read from the buffer's start (which
/// `SenseOperator` and `map_coordinates` did before: tests/sense.rs, above). Exact equality: the same kernels on the
/// same values.
#[test]
fn processes_on_frame_views_match_their_packed_copies() {
    use cliper::*;
    use num_complex::Complex32;
    fn compare<T: Element + PartialEq + std::fmt::Debug>(name: &str, view: Result<XData<T>>, packed: Result<XData<T>>) {
        match (view, packed) {
            (Err(e), _) => assert!(e.to_string().contains("contiguous"), "{name}: refused without saying why: {e}"),
            (Ok(a), Ok(b)) => assert_eq!(a.to_vec().unwrap(), b.to_vec().unwrap(), "{name} on a frame view"),
            (Ok(_), Err(e)) => panic!("{name} on the packed copy: {e}"),
        }
    }
    let app = common::app();
    let v: Vec<f32> =
        (0..2 * 20 * 17).map(|i| ((i * 37) % 101) as f32 * 0.1 + if i >= 340 { 3.0 } else { 0.0 }).collect();
    let both = XData::from_slice(app, &[2, 20, 17], &v).unwrap();
    let f1 = both.index_axis(0, 1).unwrap();
    let p1 = f1.contiguous().unwrap();
    let c: Vec<Complex32> = v.iter().map(|&x| Complex32::new(x, 1.0 - x)).collect();
    let cboth = XData::from_slice(app, &[2, 20, 17], &c).unwrap();
    let (c1, cp) = (cboth.index_axis(0, 1).unwrap(), cboth.index_axis(0, 1).unwrap().contiguous().unwrap());
    compare("Fft", Fft::apply(&c1, FftParams::forward()), Fft::apply(&cp, FftParams::forward()));
    let g = Filter::<f32>::gaussian(1.5, 2).unwrap();
    compare(
        "Convolution",
        Convolution::apply(&f1, &g, ConvParams::default()),
        Convolution::apply(&p1, &g, ConvParams::default()),
    );
    let pad = PadParams::new(&[(2, 3), (1, 0)]);
    compare("Pad", Pad::apply(&f1, pad.clone()), Pad::apply(&p1, pad));
    compare("NormN", NormN::apply(&f1, NormParams::default()), NormN::apply(&p1, NormParams::default()));
    compare(
        "Threshold",
        ThresholdValue::apply(&f1, ThresholdParams::new(ThresholdMethod::Otsu)),
        ThresholdValue::apply(&p1, ThresholdParams::new(ThresholdMethod::Otsu)),
    );
    let mask: Vec<f32> = v.iter().map(|&x| if x > 5.0 { 1.0 } else { 0.0 }).collect();
    let mboth = XData::from_slice(app, &[2, 20, 17], &mask).unwrap();
    let (m1, mp) = (mboth.index_axis(0, 1).unwrap(), mboth.index_axis(0, 1).unwrap().contiguous().unwrap());
    compare(
        "DistanceTransform",
        DistanceTransform::apply(&m1, DistanceParams::default()),
        DistanceTransform::apply(&mp, DistanceParams::default()),
    );
    compare(
        "Statistic",
        Statistic::<f32, f32>::apply(&f1, &StatParams::new(StatKind::Mean)),
        Statistic::<f32, f32>::apply(&p1, &StatParams::new(StatKind::Mean)),
    );

    compare(
        "PeakLocalMax",
        PeakLocalMax::apply(&f1, None, PeakParams::default()),
        PeakLocalMax::apply(&p1, None, PeakParams::default()),
    );
    compare("Label", Label::apply(&m1, Default::default()), Label::apply(&mp, Default::default()));

    compare(
        "GradientMagnitude",
        GradientMagnitude::apply(&f1, Default::default()),
        GradientMagnitude::apply(&p1, Default::default()),
    );
    let rank = RankParams::new(RankKind::Median).size(&[3, 5]);
    compare("RankFilter", RankFilter::apply(&f1, rank.clone()), RankFilter::apply(&p1, rank));
    compare(
        "BinaryMorphology",
        BinaryMorphology::apply(&m1, BinaryParams::new(MorphologyOp::Erosion)),
        BinaryMorphology::apply(&mp, BinaryParams::new(MorphologyOp::Erosion)),
    );
    compare(
        "SplineFilter",
        SplineFilter::apply(&f1, SplineParams::default()),
        SplineFilter::apply(&p1, SplineParams::default()),
    );
    let sq = both.slice_axis(1, 0..17).unwrap();
    let (s1, sp) = (sq.index_axis(0, 1).unwrap(), sq.index_axis(0, 1).unwrap().contiguous().unwrap());
    compare(
        "MatMul",
        MatMul::apply(&s1, &s1, MatMulParams::default()),
        MatMul::apply(&sp, &sp, MatMulParams::default()),
    );
    compare("Dot", Dot::apply(&f1, &f1, DotParams::default()), Dot::apply(&p1, &p1, DotParams::default()));
    compare("ComplexAbs", ComplexAbs::apply(&c1), ComplexAbs::apply(&cp));
    compare("ApplyMask", ApplyMask::apply(&c1, &m1), ApplyMask::apply(&cp, &mp));
}
