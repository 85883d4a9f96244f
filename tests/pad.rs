//! Pad against a float64 reference written from numpy.pad's rules, for every border mode, widths
//! {0, 1, n−1, n, 3n} (wider than the axis included), ranks 1–3, strided views, real and complex data.
//! Padding moves data without arithmetic, so results must be exact.

mod common;
use cliper::prelude::*;
use common::*;
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};

const MODES: [Border; 5] = [Border::Constant(2.5), Border::Nearest, Border::Mirror, Border::Reflect, Border::Wrap];

fn pad_ref(x: &ArrayD<Complex64>, widths: &[(usize, usize)], mode: Border) -> ArrayD<Complex64> {
    let shape: Vec<usize> = x.shape().iter().zip(widths).map(|(&n, &(b, a))| n + b + a).collect();
    let fill = match mode {
        Border::Constant(v) => Complex64::new(v, 0.0),
        _ => Complex64::default(),
    };
    ArrayD::from_shape_fn(IxDyn(&shape), |idx| {
        let mut src = Vec::with_capacity(shape.len());
        for k in 0..shape.len() {
            match border_source(mode, idx[k] as i64 - widths[k].0 as i64, x.shape()[k] as i64) {
                Some(i) => src.push(i as usize),
                None => return fill,
            }
        }
        x[IxDyn(&src)]
    })
}

fn check<T: Element>(rng: &mut Rng, shape: &[usize], widths: &[(usize, usize)], mode: Border, transposed: bool) {
    let (x, host) = random::<T>(rng, shape);
    let (x, host) = if transposed && shape.len() >= 2 {
        let n = shape.len();
        let mut axes: Vec<usize> = (0..n).collect();
        axes.swap(n - 2, n - 1);
        (x.t(), host.permuted_axes(IxDyn(&axes)))
    } else {
        (x, host)
    };
    // The planner's choice (on CPU devices the host's rows), then the kernel.
    for kernels_only in [false, true] {
        let out = poisoned::<T>(&Pad::<T>::output_shape(x.shape(), &PadParams::new(widths)).unwrap());
        let mut pad = Pad::new(&x, &out, PadParams::new(widths).border(mode).kernels_only(kernels_only));
        pad.init().unwrap();
        pad.launch().unwrap();
        let what = format!(
            "{} {:?} {:?} {mode:?} transposed={transposed} via {}",
            T::NAME,
            x.shape(),
            widths,
            pad.strategy().unwrap()
        );
        assert_same(&fetch(&out), &pad_ref(&host, widths, mode), &what);
    }
}

/// A width from {0, 1, n−1, n, 3n} for an axis of extent n.
fn width(rng: &mut Rng, n: usize) -> usize {
    [0, 1, n.saturating_sub(1), n, 3 * n][rng.below(5)]
}

#[test]
fn every_mode_every_width_class_ranks_1_to_3() {
    let mut rng = Rng::new(41);
    for mode in MODES {
        for n in [1, 2, 7, 129] {
            for w in [0, 1, n - 1, n, 3 * n] {
                check::<f32>(&mut rng, &[n], &[(w, (w + 1) % (n + 2))], mode, false);
            }
        }
        for shape in [[7usize, 5], [1, 9], [33, 3]] {
            for _ in 0..4 {
                let widths: Vec<(usize, usize)> =
                    shape.iter().map(|&n| (width(&mut rng, n), width(&mut rng, n))).collect();
                let transposed = rng.below(2) == 1;
                check::<f32>(&mut rng, &shape, &widths, mode, transposed);
            }
        }
        for shape in [[3usize, 4, 5], [2, 1, 7]] {
            for _ in 0..3 {
                let widths: Vec<(usize, usize)> =
                    shape.iter().map(|&n| (width(&mut rng, n), width(&mut rng, n))).collect();
                let transposed = rng.below(2) == 1;
                check::<f32>(&mut rng, &shape, &widths, mode, transposed);
            }
        }
    }
}

#[test]
fn complex_and_double_data() {
    let mut rng = Rng::new(42);
    for mode in MODES {
        check::<Complex32>(&mut rng, &[5, 6], &[(2, 7), (6, 0)], mode, true);
        check::<f64>(&mut rng, &[4, 3, 2], &[(1, 0), (3, 9), (2, 2)], mode, false);
        check::<Complex64>(&mut rng, &[257], &[(300, 1)], mode, false);
        // Output rows of 40 f32 / 10 c32 start on 16-byte boundaries: runs inside the source are stored as
        // vectors, from a source offset by 5 (unaligned) or 4, and the runs across the borders element-wise.
        check::<f32>(&mut rng, &[37, 31], &[(3, 4), (5, 4)], mode, false);
        check::<f32>(&mut rng, &[6, 29], &[(1, 0), (4, 7)], mode, true);
        check::<Complex32>(&mut rng, &[9, 7], &[(2, 2), (1, 2)], mode, false);
    }
}

#[test]
fn image_sized_pad_and_crop_round_trip() {
    let mut rng = Rng::new(43);
    let (x, host) = random::<f32>(&mut rng, &[257, 1031]);
    let padded = Pad::apply(&x, PadParams::new(&[(8, 8)]).border(Border::Mirror)).unwrap();
    assert_same(&fetch(&padded), &pad_ref(&host, &[(8, 8), (8, 8)], Border::Mirror), "257x1031 reflect 8");
    assert_same(&fetch(&padded.crop(&[(8, 8)]).unwrap()), &host, "crop undoes the pad");
}

#[test]
fn zero_dimensional_and_empty_arrays() {
    let x = XData::from_slice(app(), &[], &[3.0f32]).unwrap();
    assert_eq!(Pad::apply(&x, PadParams::new(&[]).border(Border::Nearest)).unwrap().to_vec().unwrap(), vec![3.0]);
    let empty = XData::<f32>::zeros(app(), &[0, 3]).unwrap();
    let out = Pad::apply(&empty, PadParams::new(&[(1, 1), (0, 0)]).border(Border::Constant(7.0))).unwrap();
    assert_eq!((out.shape(), out.to_vec().unwrap()), (&[2usize, 3][..], vec![7.0; 6]));
    let err = Pad::apply(&empty, PadParams::new(&[(1, 1), (0, 0)]).border(Border::Mirror)).err().unwrap().to_string();
    assert!(err.contains("axis 0") && err.contains("empty"), "{err}");
}

#[test]
fn bad_shapes_are_named() {
    let x = XData::<f32>::zeros(app(), &[4, 5]).unwrap();
    let wrong = XData::<f32>::zeros(app(), &[6, 6]).unwrap();
    let mut p = Pad::new(&x, &wrong, PadParams::new(&[(1, 1)]).border(Border::Nearest));
    let err = p.init().unwrap_err().to_string();
    assert!(err.contains("[6, 7]") && err.contains("[6, 6]") && err.contains("[4, 5]"), "{err}");
    let err =
        Pad::apply(&x, PadParams::new(&[(1, 1), (1, 1), (1, 1)]).border(Border::Nearest)).err().unwrap().to_string();
    assert!(err.contains("3 (before, after)") && err.contains("[4, 5]"), "{err}");
    let mut inplace = Pad::new(&x, &x, PadParams::new(&[(0, 0)]).border(Border::Nearest));
    assert!(inplace.init().unwrap_err().to_string().contains("overlaps"));
}
