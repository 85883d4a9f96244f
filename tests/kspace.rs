//! The k-space processes against float64 host references: element-wise products (plain, conjugated, broadcast),
//! masks, real parts, scaling, fills, coil sums (with maps), root sums of squares, fftshift/ifftshift (numpy's
//! rules, odd lengths), and the two reconstructions on the simulated k-space in `data/`. c32 and c64, random
//! shapes that are not multiples of any tile (1, 7, 129…), strided views.
//!
//! Tolerances (u = the unit roundoff of the element type): data movement (shift, fill, real and imaginary parts)
//! is exact; a complex product within 4u of |a|·|b| (each component is two products and a sum, rounded); a real
//! mask product within 2u; |z| within 8u·|z| and arg z within 12u·π (OpenCL allows `hypot` 4 ulp and `atan2`
//! 6 ulp); coil sums of up to 13 terms within 16u relative to Σ|terms|; the reconstructions within 1e-5 absolute of the phantom (values 0…1; float32 FFTs of length 64 err
//! by a few 1e-7, and the maps were stored in float32).

mod common;
#[cfg(feature = "hdf5")]
#[path = "kspace/mri_h5.rs"]
mod mri_h5;
use cliper::prelude::*;
use common::*;
use ndarray::{ArrayD, Axis, Dimension, IxDyn};
use num_complex::{Complex32, Complex64};

fn run(mut p: impl Process) {
    p.init().unwrap();
    p.launch().unwrap();
}

fn close(got: &ArrayD<Complex64>, want: &ArrayD<Complex64>, scale: &ArrayD<f64>, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    for (i, ((g, w), s)) in got.iter().zip(want.iter()).zip(scale.iter()).enumerate() {
        assert!((g - w).norm() <= tol * s.max(f64::MIN_POSITIVE), "{what}: element {i}: {g} vs {w} (scale {s})");
    }
}

fn products<T: ComplexElement>(seed: u64) {
    let mut rng = Rng::new(seed);
    let eps = eps::<T>();
    // (x shape, y shape): same shape, maps over frames and coils, a single value, a broadcast middle axis.
    for (xs, ys) in [
        (vec![7usize, 129], vec![7usize, 129]),
        (vec![3, 5, 7, 9], vec![5, 7, 9]),
        (vec![2, 13], vec![1]),
        (vec![4, 1, 6], vec![4, 5, 1]),
    ] {
        let (x, hx) = random::<T>(&mut rng, &xs);
        let (y, hy) = random::<T>(&mut rng, &ys);
        let Some(hy_b) = hy.broadcast(IxDyn(&broadcast_shape(&xs, &ys))) else { panic!("{ys:?}") };
        if hy_b.shape() != hx.shape() {
            // The output must have x's shape: y may not grow it ([4, 1, 6] with [4, 5, 1] is an error).
            let out = poisoned::<T>(&xs);
            let e = ComplexElementProd::new(&x, &y, &out, ProductKind::Plain).init().unwrap_err().to_string();
            assert!(e.contains(&format!("{ys:?}")), "{e}");
            continue;
        }
        for conj in [false, true] {
            let out = poisoned::<T>(&xs);
            run(ComplexElementProd::new(
                &x,
                &y,
                &out,
                if conj { ProductKind::ConjugateSecond } else { ProductKind::Plain },
            ));
            let want = ndarray::Zip::from(&hx).and(&hy_b).map_collect(|a, b| a * if conj { b.conj() } else { *b });
            let scale = ndarray::Zip::from(&hx).and(&hy_b).map_collect(|a, b| a.norm() * b.norm());
            close(&fetch(&out), &want, &scale, 4.0 * eps, &format!("{} {xs:?}·{ys:?} conj {conj}", T::NAME));
        }
    }
    // In place, on a transposed view.
    let (x, hx) = random::<T>(&mut rng, &[9, 7]);
    let (y, hy) = random::<T>(&mut rng, &[7, 9]);
    let xt = x.t();
    run(ComplexElementProd::new(&xt, &y, &xt, ProductKind::Plain));
    let want = hx.t().to_owned() * &hy;
    let scale = ndarray::Zip::from(&hx.t()).and(&hy).map_collect(|a, b| a.norm() * b.norm());
    close(&fetch(&xt), &want, &scale, 4.0 * eps, "in place on a view");
}

fn broadcast_shape(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|k| {
            let get = |s: &[usize]| if k + s.len() < n { 1 } else { s[k + s.len() - n] };
            get(a).max(get(b))
        })
        .collect()
}

#[test]
fn element_products_match_numpy_broadcasting() {
    products::<Complex32>(1);
    products::<Complex64>(2);
}

fn unary<T: ComplexElement>(seed: u64) {
    let mut rng = Rng::new(seed);
    let eps = eps::<T>();
    let (x, hx) = random::<T>(&mut rng, &[5, 1, 129]);
    // Mask over the last two axes, in place on a copy.
    let (m, hm) = random::<T::Real>(&mut rng, &[1, 129]);
    let out = poisoned::<T>(&[5, 1, 129]);
    run(ApplyMask::new(&x, &m, &out));
    let want = ndarray::Zip::from(&hx).and(&hm.broadcast(IxDyn(&[5, 1, 129])).unwrap()).map_collect(|a, b| a * b.re);
    close(&fetch(&out), &want, &hx.mapv(|v| v.norm()), 2.0 * eps, "mask");
    // Real parts.
    let re = XData::<T::Real>::zeros(app(), &[5, 1, 129]).unwrap();
    for (part, f, tol, scale) in [
        (
            ComplexPart::Real,
            (|z: Complex64| z.re) as fn(Complex64) -> f64,
            0.0,
            (|_: Complex64| 1.0) as fn(Complex64) -> f64,
        ),
        (ComplexPart::Imag, |z| z.im, 0.0, |_| 1.0),
        (ComplexPart::Abs, |z| z.norm(), 8.0 * eps, |z| z.norm()),
        (ComplexPart::Arg, |z| z.arg(), 12.0 * eps, |_| std::f64::consts::PI),
    ] {
        run(Complex2Real::new(&x, &re, part));
        let want = hx.mapv(|z| Complex64::new(f(z), 0.0));
        close(&fetch(&re), &want, &hx.mapv(scale), tol, &format!("{part:?}"));
    }
    run(ComplexAbs::new(&x, &re));
    close(&fetch(&re), &hx.mapv(|z| Complex64::new(z.norm(), 0.0)), &hx.mapv(|z| z.norm()), 8.0 * eps, "ComplexAbs");
    // Scaling by a complex factor, in place; filling a strided column.
    let factor = Complex64::new(0.5, -2.0);
    run(ScalarMultiply::new(&x, &x, T::from_c64(factor)));
    close(&fetch(&x), &hx.mapv(|z| z * factor), &hx.mapv(|z| z.norm() * factor.norm()), 4.0 * eps, "scale");
    let grid = XData::<T>::zeros(app(), &[4, 7]).unwrap();
    run(Fill::new(&grid.index_axis(1, 3).unwrap(), T::from_c64(Complex64::new(1.5, -1.0))));
    let got = fetch(&grid);
    for ((r, c), v) in got.indexed_iter().map(|(i, v)| ((i[0], i[1]), v)) {
        let want = if c == 3 { Complex64::new(1.5, -1.0) } else { Complex64::new(0.0, 0.0) };
        assert_eq!(*v, want, "fill at ({r}, {c})");
    }
}

#[test]
fn masks_parts_scaling_and_fills() {
    unary::<Complex32>(3);
    unary::<Complex64>(4);
    // Real ScalarMultiply and Fill too.
    let x = XData::from_slice(app(), &[3], &[1.0f64, 2.0, -3.0]).unwrap();
    run(ScalarMultiply::new(&x, &x, -0.5));
    assert_eq!(x.to_vec().unwrap(), vec![-0.5, -1.0, 1.5]);
    run(Fill::new(&x, 2.25));
    assert_eq!(x.to_vec().unwrap(), vec![2.25; 3]);
}

fn coils<T: ComplexElement>(seed: u64) {
    let mut rng = Rng::new(seed);
    let eps = eps::<T>();
    for (shape, coil_axis) in
        [(vec![13usize, 7, 9], 0usize), (vec![2, 3, 5, 1, 129], 1), (vec![1, 1], 0), (vec![4, 6], 1)]
    {
        let (x, hx) = random::<T>(&mut rng, &shape);
        let (maps, hm) = random::<T>(&mut rng, &shape[coil_axis..]);
        let out_shape: Vec<usize> =
            shape.iter().enumerate().filter(|&(k, _)| k != coil_axis).map(|(_, &n)| n).collect();
        let hm_b = hm.broadcast(IxDyn(&shape)).unwrap().to_owned();
        for with_maps in [false, true] {
            let out = poisoned::<T>(&out_shape);
            let params = if with_maps { CoilParams::new(coil_axis).maps(&maps) } else { CoilParams::new(coil_axis) };
            let p = CoilSum::new(&x, &out, params);
            run(p);
            let terms = if with_maps {
                ndarray::Zip::from(&hx).and(&hm_b).map_collect(|a, b| a * b.conj())
            } else {
                hx.clone()
            };
            let want = terms.sum_axis(Axis(coil_axis));
            let scale = terms.mapv(|v| v.norm()).sum_axis(Axis(coil_axis));
            close(&fetch(&out), &want, &scale, 16.0 * eps, &format!("{} CoilSum {shape:?} maps {with_maps}", T::NAME));
        }
        let out = XData::<T::Real>::zeros(app(), &out_shape).unwrap();
        run(RSoS::new(&x, &out, coil_axis));
        let want = hx.mapv(|v| v.norm_sqr()).sum_axis(Axis(coil_axis)).mapv(|s| Complex64::new(s.sqrt(), 0.0));
        close(&fetch(&out), &want, &want.mapv(|v| v.re), 16.0 * eps, &format!("RSoS {shape:?}"));
    }
    // Views that do not merge: a transposed input (coils on axis 1 of the view) and a transposed output.
    let (x, hx) = random::<T>(&mut rng, &[7, 5, 3]);
    let xv = x.permuted_axes(&[2, 0, 1]).unwrap(); // [3, 7, 5], coil axis 0 = original axis 2
    let out = XData::<T>::zeros(app(), &[5, 7]).unwrap();
    let outv = out.t(); // [7, 5] view of a [5, 7] array
    run(CoilSum::new(&xv, &outv, CoilParams::new(0)));
    let want = hx.sum_axis(Axis(2));
    close(&fetch(&outv), &want, &hx.mapv(|v| v.norm()).sum_axis(Axis(2)), 16.0 * eps, "strided CoilSum");
}

#[test]
fn coil_sums_and_root_sums_of_squares() {
    coils::<Complex32>(5);
    coils::<Complex64>(6);
}

/// numpy.fft.fftshift / ifftshift over `axes`.
fn shift_ref(x: &ArrayD<Complex64>, axes: &[usize], inverse: bool) -> ArrayD<Complex64> {
    let mut out = x.clone();
    for (idx, v) in out.indexed_iter_mut() {
        let mut src = idx.slice().to_vec();
        for &a in axes {
            let n = x.shape()[a];
            let k = if inverse { (n - n / 2) % n } else { n / 2 };
            src[a] = (idx[a] + n - k) % n;
        }
        *v = x[IxDyn(&src)];
    }
    out
}

#[test]
fn shifts_follow_numpy_for_odd_and_even_lengths() {
    let mut rng = Rng::new(7);
    for (shape, axes) in [
        (vec![5usize], None),
        (vec![8], None),
        (vec![7, 6], None),
        (vec![3, 129, 1, 4], Some(vec![1, 3])),
        (vec![1], None),
    ] {
        let (x, hx) = random::<Complex32>(&mut rng, &shape);
        let all: Vec<usize> = (0..shape.len()).collect();
        let axes_ref = axes.clone().unwrap_or(all);
        for inverse in [false, true] {
            let out = poisoned::<Complex32>(&shape);
            let params = if inverse { FftShiftParams::inverse() } else { FftShiftParams::default() };
            let params = match &axes {
                Some(a) => params.axes(a),
                None => params,
            };
            run(FftShift::new(&x, &out, params));
            assert_same(&fetch(&out), &shift_ref(&hx, &axes_ref, inverse), &format!("{shape:?} inverse {inverse}"));
        }
    }
    // Real data through a transposed view; shift then inverse shift is the identity for odd lengths too.
    let (x, hx) = random::<f64>(&mut rng, &[9, 4]);
    let (a, b) = (XData::<f64>::zeros(app(), &[4, 9]).unwrap(), XData::<f64>::zeros(app(), &[4, 9]).unwrap());
    run(FftShift::new(&x.t(), &a, FftShiftParams::default()));
    run(FftShift::new(&a, &b, FftShiftParams::inverse()));
    assert_same(&fetch(&b), &hx.t().to_owned(), "round trip");
    let e = FftShift::new(&a, &a, FftShiftParams::default()).init().unwrap_err().to_string();
    assert!(e.contains("in place"), "{e}");
}

#[test]
fn reconstructions_recover_the_sample_phantom() {
    let phantom = SheppLogan::<f32>::reference(&[64, 64]).unwrap();
    for path in ["data/kspace.mat", "data/kspace.cfl"] {
        let k = KData::<Complex32>::load(app(), path).unwrap();
        let image = poisoned::<Complex32>(&[64, 64]);
        run(SimpleMRIRecon::new(&k, &image, ReconParams::default()));
        let got = image.to_vec().unwrap();
        let worst = got
            .iter()
            .zip(&phantom)
            .map(|(g, p)| (Complex64::new(g.re as f64, g.im as f64) - p).norm())
            .fold(0.0, f64::max);
        assert!(worst < 1e-5, "{path}: SENSE combination off the phantom by {worst:.2e}");
        let magnitude = XData::<f32>::zeros(app(), &[64, 64]).unwrap();
        run(RSoSRecon::new(&k, &magnitude, ReconParams::default()));
        let worst = magnitude
            .to_vec()
            .unwrap()
            .iter()
            .zip(&phantom)
            .map(|(g, p)| (*g as f64 - p.abs()).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-5, "{path}: RSoS off |phantom| by {worst:.2e}");
    }
    // Undersampled with the stored mask: no longer the phantom (aliasing), but still the zero-filled
    // reconstruction numpy would give — checked through the relative error of the known pattern.
    let k = KData::<Complex32>::load(app(), "data/kspace.mat").unwrap();
    let masked = XData::<Complex32>::zeros(app(), k.as_xdata().shape()).unwrap();
    run(ApplyMask::new(k.as_xdata(), k.sampling_mask().unwrap(), &masked));
    let km = KData::new(masked, 2).unwrap().with_sensitivity_maps(k.sensitivity_maps().unwrap().clone()).unwrap();
    let image = XData::<Complex32>::zeros(app(), &[64, 64]).unwrap();
    run(SimpleMRIRecon::new(&km, &image, ReconParams::default()));
    let got = image.to_vec().unwrap();
    let err: f64 =
        got.iter().zip(&phantom).map(|(g, p)| (Complex64::new(g.re as f64, g.im as f64) - p).norm_sqr()).sum();
    let size: f64 = phantom.iter().map(|p| p * p).sum();
    let rel = (err / size).sqrt();
    assert!(rel > 1e-3 && rel < 0.5, "masked reconstruction error {rel:.3e} should show aliasing, not garbage");
    // No maps: a clear error.
    let bare = KData::new(k.as_xdata().clone(), 2).unwrap();
    let e = SimpleMRIRecon::new(&bare, &image, ReconParams::default()).init().unwrap_err().to_string();
    assert!(e.contains("sensitivity maps") && e.contains("RSoSRecon"), "{e}");
}

#[test]
fn shape_errors_name_both_shapes() {
    let x = XData::<Complex32>::zeros(app(), &[4, 5]).unwrap();
    let out = XData::<Complex32>::zeros(app(), &[4]).unwrap();
    let e = CoilSum::new(&x, &out, CoilParams::new(0)).init().unwrap_err().to_string();
    assert!(e.contains("[4]") && e.contains("[5]") && e.contains("[4, 5]"), "{e}");
    let maps = XData::<Complex32>::zeros(app(), &[3, 5]).unwrap();
    let good = XData::<Complex32>::zeros(app(), &[5]).unwrap();
    let e = CoilSum::new(&x, &good, CoilParams::new(0).maps(&maps)).init().unwrap_err().to_string();
    assert!(e.contains("[4, 5]") && e.contains("[3, 5]"), "{e}");
    let e = CoilSum::new(&x, &good, CoilParams::new(2)).init().unwrap_err();
    assert!(matches!(&e, cliper::Error::Axis { axis: 2, shape, .. } if shape == &[4, 5]), "{e:?}");
    assert!(e.to_string().contains("(coil axis): axis 2 does not exist"), "{e}");
    let wrong = XData::<Complex32>::zeros(app(), &[4, 6]).unwrap();
    let e = ComplexElementProd::new(&x, &x, &wrong, ProductKind::Plain).init().unwrap_err().to_string();
    assert!(e.contains("[4, 5]") && e.contains("[4, 6]"), "{e}");
    let y = XData::<Complex32>::zeros(app(), &[3]).unwrap();
    let e = ComplexElementProd::new(&x, &y, &x, ProductKind::Plain).init().unwrap_err().to_string();
    assert!(e.contains("[3]") && e.contains("[4, 5]"), "{e}");
}
